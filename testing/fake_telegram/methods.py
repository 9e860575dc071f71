"""The fake Bot API's methods (``POST`` or ``GET /bot<TOKEN>/<method>``, parameters as
JSON, form or query): ``getMe``, ``getUpdates`` (a long poll: answers once an update is
queued or after ``timeout`` seconds; ``offset`` confirms the updates before it),
``sendMessage`` (``parse_mode: HTML`` checked like Telegram: unknown or unbalanced tags are
a 400 "can't parse entities"; over 4096 UTF-16 units a 400 "message is too long"),
``editMessageText``, ``sendChatAction``, ``getChat``, ``setWebhook``, ``deleteWebhook``,
``getFile`` (a file users sent; its bytes at ``GET /file/bot<TOKEN>/<file_path>``), and the
uploads of :mod:`.files` (``sendVoice``, ``sendPhoto``, ``sendAudio``, ``sendDocument``).
A wrong token gets a 401, an unknown method a 404, ``getUpdates`` while a webhook is set a
409. Every answer is ``{"ok": true, "result": ...}`` or ``{"ok": false, "error_code",
"description"[, "parameters"]}``."""

from __future__ import annotations

import itertools
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs

from ..local_server import (LocalHTTPServer, RecordedRequest, multipart, read_request,
                            send_json)
from . import files
from .markup import MarkupError, html_to_plain, utf16_length

TOKEN = "123456789:AAFakeTelegramBotTokenForTests_0123456"
LIMIT = 4096
CHAT_TYPES = {"dm": "private", "private": "private", "group": "group",
              "supergroup": "supergroup", "channel": "channel"}


@dataclass
class SentMessage:
    """A message the bot sent: ``text`` as sent, ``plain`` as the user sees it."""

    message_id: int
    chat_id: str
    text: str
    plain: str
    parse_mode: str | None = None
    reply_to_message_id: int | None = None
    message_thread_id: int | None = None
    edits: list[str] = field(default_factory=list)  # later texts, plain, in order

    @property
    def shown(self) -> str:
        """What the user sees now: the last edit, else the text as sent (plain)."""
        return self.edits[-1] if self.edits else self.plain


@dataclass(frozen=True)
class Answer:
    """How the fake answered one call, and when (``time.monotonic()``)."""

    method: str
    status: int
    at: float


@dataclass
class Failure:
    status: int
    description: str
    retry_after: int | None


@dataclass
class State:
    token: str
    lock: threading.Condition = field(default_factory=threading.Condition)
    closing: threading.Event = field(default_factory=threading.Event)
    updates: list[dict[str, Any]] = field(default_factory=list)  # not confirmed yet
    confirmed: int = 0  # the highest offset a getUpdates confirmed with
    chats: dict[str, dict[str, Any]] = field(default_factory=dict)
    sent: list[SentMessage] = field(default_factory=list)
    actions: list[tuple[str, str]] = field(default_factory=list)  # (chat id, action)
    requests: list[RecordedRequest] = field(default_factory=list)
    answers: list[Answer] = field(default_factory=list)
    failures: dict[str, list[Failure]] = field(default_factory=dict)
    webhook: dict[str, Any] = field(default_factory=dict)
    files: dict[str, tuple[str, bytes]] = field(default_factory=dict)  # id -> (path, bytes)
    media: list[files.SentMedia] = field(default_factory=list)  # the bot's uploads
    ids: itertools.count = field(default_factory=lambda: itertools.count(1))
    update_ids: itertools.count = field(default_factory=lambda: itertools.count(100))


class _Error(Exception):
    def __init__(self, status: int, description: str, parameters: dict[str, Any] | None = None):
        super().__init__(description)
        self.status, self.description, self.parameters = status, description, parameters


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    server: LocalHTTPServer

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802
        self._serve()

    def do_POST(self) -> None:  # noqa: N802
        self._serve()

    def _serve(self) -> None:
        state: State = self.server.state
        request = read_request(self)
        with state.lock:
            state.requests.append(request)
        if request.path.startswith("/file/bot"):
            self._download(state, request.path)
            return
        params = _params(request)
        _, _, rest = request.path.partition("/bot")
        token, _, method = rest.partition("/")
        try:
            if token != state.token:
                raise _Error(401, "Unauthorized")
            answer = getattr(self, f"_m_{method}", None)
            if method in files.UPLOADS:
                answer = lambda state, params: self._upload(state, method, request, params)  # noqa: E731
            if answer is None:
                raise _Error(404, "Not Found")
            with state.lock:
                failures = state.failures.get(method)
                failure = failures.pop(0) if failures else None
            if failure is not None:
                extra = {"retry_after": failure.retry_after} if failure.retry_after else None
                raise _Error(failure.status, failure.description, extra)
            result = answer(state, params)
            self._log(method, 200)
            send_json(self, 200, {"ok": True, "result": result})
        except _Error as exc:
            body: dict[str, Any] = {"ok": False, "error_code": exc.status,
                                    "description": exc.description}
            if exc.parameters:
                body["parameters"] = exc.parameters
            self._log(method, exc.status)
            send_json(self, exc.status, body)

    def _download(self, state: State, path: str) -> None:
        token, _, file_path = path[len("/file/bot"):].partition("/")
        with state.lock:
            found = next((data for stored, data in state.files.values()
                          if stored == file_path), None) if token == state.token else None
        body = found if found is not None else b"Not Found"
        self.send_response(200 if found is not None else 404)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _log(self, method: str, status: int) -> None:
        state: State = self.server.state
        with state.lock:
            state.answers.append(Answer(method, status, time.monotonic()))

    # --- methods -----------------------------------------------------------------------------
    def _m_getMe(self, state: State, params: dict[str, Any]) -> Any:  # noqa: N802
        return _bot(state)

    def _m_getUpdates(self, state: State, params: dict[str, Any]) -> Any:  # noqa: N802
        offset = int(params.get("offset") or 0)
        limit = int(params.get("limit") or 100)
        deadline = time.monotonic() + float(params.get("timeout") or 0)
        with state.lock:
            if state.webhook:
                raise _Error(409, "Conflict: can't use getUpdates method while webhook is "
                             "active; use deleteWebhook to delete the webhook first")
            if offset:
                state.updates = [u for u in state.updates if u["update_id"] >= offset]
                state.confirmed = max(state.confirmed, offset)
                state.lock.notify_all()
            while not state.updates and not state.closing.is_set():
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                state.lock.wait(min(left, 0.1))
            return list(state.updates[:limit])

    def _m_sendMessage(self, state: State, params: dict[str, Any]) -> Any:  # noqa: N802
        chat = _chat(state, params)
        text, plain = _text(params)
        with state.lock:
            message = SentMessage(next(state.ids), str(chat["id"]), text, plain,
                                  params.get("parse_mode"), _int(params.get("reply_to_message_id")),
                                  _int(params.get("message_thread_id")))
            state.sent.append(message)
            state.lock.notify_all()
        return _message(state, chat, message)

    def _upload(self, state: State, method: str, request: RecordedRequest,
                params: dict[str, Any]) -> Any:
        chat = _chat(state, params)
        with state.lock:
            sent = files.upload(state, method, request, params, chat, _Error)
            state.media.append(sent)
            state.lock.notify_all()
        return files.media_message(_bot(state), chat, sent)

    def _m_editMessageText(self, state: State, params: dict[str, Any]) -> Any:  # noqa: N802
        chat = _chat(state, params)
        text, plain = _text(params)
        wanted = _int(params.get("message_id"))
        with state.lock:
            message = next((m for m in state.sent if m.message_id == wanted
                            and m.chat_id == str(chat["id"])), None)
            if message is None:
                raise _Error(400, "Bad Request: message to edit not found")
            if plain == (message.edits[-1] if message.edits else message.plain):
                raise _Error(400, "Bad Request: message is not modified: specified new message "
                             "content and reply markup are exactly the same as a current "
                             "content and reply markup of the message")
            message.edits.append(plain)
            state.lock.notify_all()
        return _message(state, chat, message)

    def _m_sendChatAction(self, state: State, params: dict[str, Any]) -> Any:  # noqa: N802
        chat = _chat(state, params)
        with state.lock:
            state.actions.append((str(chat["id"]), str(params.get("action"))))
        return True

    def _m_getChat(self, state: State, params: dict[str, Any]) -> Any:  # noqa: N802
        return _chat(state, params)

    def _m_getFile(self, state: State, params: dict[str, Any]) -> Any:  # noqa: N802
        file_id = str(params.get("file_id") or "")
        with state.lock:
            stored = state.files.get(file_id)
        if stored is None:
            raise _Error(400, "Bad Request: invalid file_id")
        return {"file_id": file_id, "file_unique_id": file_id, "file_size": len(stored[1]),
                "file_path": stored[0]}

    def _m_setWebhook(self, state: State, params: dict[str, Any]) -> Any:  # noqa: N802
        if not params.get("url"):
            raise _Error(400, "Bad Request: bad webhook: An HTTPS URL must be provided for "
                         "webhook")
        with state.lock:
            state.webhook = {"url": params["url"], "secret_token": params.get("secret_token"),
                             "allowed_updates": params.get("allowed_updates")}
        return True

    def _m_deleteWebhook(self, state: State, params: dict[str, Any]) -> Any:  # noqa: N802
        with state.lock:
            state.webhook = {}
            if str(params.get("drop_pending_updates")).lower() == "true":
                state.updates.clear()
        return True


def _params(request: RecordedRequest) -> dict[str, Any]:
    params: dict[str, Any] = {k: v[0] for k, v in request.query.items()}
    body = request.body
    parts = multipart(request)
    if parts:  # an upload: its fields beside the file
        params.update({k: p.text for k, p in parts.items() if p.filename is None})
    elif isinstance(body, dict) and "_raw" in body:  # form-encoded
        params.update({k: v[0] for k, v in parse_qs(body["_raw"]).items()})
    elif isinstance(body, dict):
        params.update(body)
    return params


def _int(value: Any) -> int | None:
    return int(value) if value not in (None, "") else None


def _bot(state: State) -> dict[str, Any]:
    return {"id": int(state.token.split(":")[0]), "is_bot": True, "first_name": "Hermes",
            "username": "hermes_test_bot"}


def _chat(state: State, params: dict[str, Any]) -> dict[str, Any]:
    chat = state.chats.get(str(params.get("chat_id", "")))
    if chat is None:
        raise _Error(400, "Bad Request: chat not found")
    return chat


def _text(params: dict[str, Any]) -> tuple[str, str]:
    text = str(params.get("text") or "")
    plain = text
    if str(params.get("parse_mode") or "").upper() == "HTML":
        try:
            plain = html_to_plain(text)
        except MarkupError as exc:
            raise _Error(400, f"Bad Request: can't parse entities: {exc}") from None
    if not plain.strip():
        raise _Error(400, "Bad Request: message text is empty")
    if utf16_length(plain) > LIMIT:
        raise _Error(400, "Bad Request: message is too long")
    return text, plain


def _message(state: State, chat: dict[str, Any], message: SentMessage) -> dict[str, Any]:
    data = {"message_id": message.message_id, "date": int(time.time()), "chat": chat,
            "from": _bot(state), "text": message.edits[-1] if message.edits else message.plain}
    if message.message_thread_id is not None:
        data["message_thread_id"] = message.message_thread_id
    return data

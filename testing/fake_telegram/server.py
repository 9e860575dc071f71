"""The fake Bot API server. Methods (``POST`` or ``GET /bot<TOKEN>/<method>``, parameters as
JSON, form or query): ``getMe``, ``getUpdates`` (a long poll: answers once an update is
queued or after ``timeout`` seconds; ``offset`` confirms the updates before it),
``sendMessage`` (``parse_mode: HTML`` checked like Telegram: unknown or unbalanced tags are
a 400 "can't parse entities"; over 4096 UTF-16 units a 400 "message is too long"),
``editMessageText``, ``sendChatAction``, ``getChat``, ``setWebhook``, ``deleteWebhook``.
A wrong token gets a 401, an unknown method a 404, ``getUpdates`` while a webhook is set a
409. Every answer is ``{"ok": true, "result": ...}`` or ``{"ok": false, "error_code",
"description"[, "parameters"]}``.

A test queues what users write (:meth:`FakeTelegram.user_message`), reads what the bot sent
(:attr:`sent`, :meth:`wait_sent`), scripts failures (:meth:`fail`, e.g. a 429 with
``retry_after``) and, in webhook mode, has "Telegram" post an update (:meth:`deliver`)."""

from __future__ import annotations

import itertools
import json
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs

from ..local_server import (LocalHTTPServer, RecordedRequest, ServedInBackground, read_request,
                            send_json)
from .markup import MarkupError, html_to_plain, utf16_length

TOKEN = "123456789:AAFakeTelegramBotTokenForTests_0123456"
LIMIT = 4096
REGISTERED = object()  # deliver(): send the secret setWebhook registered
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


@dataclass(frozen=True)
class Answer:
    """How the fake answered one call, and when (``time.monotonic()``)."""

    method: str
    status: int
    at: float


@dataclass
class _Failure:
    status: int
    description: str
    retry_after: int | None


@dataclass
class _State:
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
    failures: dict[str, list[_Failure]] = field(default_factory=dict)
    webhook: dict[str, Any] = field(default_factory=dict)
    ids: itertools.count = field(default_factory=lambda: itertools.count(1))
    update_ids: itertools.count = field(default_factory=lambda: itertools.count(100))


class _Error(Exception):
    def __init__(self, status: int, description: str, parameters: dict[str, Any] | None = None):
        super().__init__(description)
        self.status, self.description, self.parameters = status, description, parameters


class _Handler(BaseHTTPRequestHandler):
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
        state: _State = self.server.state
        request = read_request(self)
        with state.lock:
            state.requests.append(request)
        params = _params(request)
        _, _, rest = request.path.partition("/bot")
        token, _, method = rest.partition("/")
        try:
            if token != state.token:
                raise _Error(401, "Unauthorized")
            answer = getattr(self, f"_m_{method}", None)
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

    def _log(self, method: str, status: int) -> None:
        state: _State = self.server.state
        with state.lock:
            state.answers.append(Answer(method, status, time.monotonic()))

    # --- methods -----------------------------------------------------------------------------
    def _m_getMe(self, state: _State, params: dict[str, Any]) -> Any:  # noqa: N802
        return _bot(state)

    def _m_getUpdates(self, state: _State, params: dict[str, Any]) -> Any:  # noqa: N802
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

    def _m_sendMessage(self, state: _State, params: dict[str, Any]) -> Any:  # noqa: N802
        chat = _chat(state, params)
        text, plain = _text(params)
        with state.lock:
            message = SentMessage(next(state.ids), str(chat["id"]), text, plain,
                                  params.get("parse_mode"), _int(params.get("reply_to_message_id")),
                                  _int(params.get("message_thread_id")))
            state.sent.append(message)
            state.lock.notify_all()
        return _message(state, chat, message)

    def _m_editMessageText(self, state: _State, params: dict[str, Any]) -> Any:  # noqa: N802
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

    def _m_sendChatAction(self, state: _State, params: dict[str, Any]) -> Any:  # noqa: N802
        chat = _chat(state, params)
        with state.lock:
            state.actions.append((str(chat["id"]), str(params.get("action"))))
        return True

    def _m_getChat(self, state: _State, params: dict[str, Any]) -> Any:  # noqa: N802
        return _chat(state, params)

    def _m_setWebhook(self, state: _State, params: dict[str, Any]) -> Any:  # noqa: N802
        if not params.get("url"):
            raise _Error(400, "Bad Request: bad webhook: An HTTPS URL must be provided for "
                         "webhook")
        with state.lock:
            state.webhook = {"url": params["url"], "secret_token": params.get("secret_token"),
                             "allowed_updates": params.get("allowed_updates")}
        return True

    def _m_deleteWebhook(self, state: _State, params: dict[str, Any]) -> Any:  # noqa: N802
        with state.lock:
            state.webhook = {}
            if str(params.get("drop_pending_updates")).lower() == "true":
                state.updates.clear()
        return True


def _params(request: RecordedRequest) -> dict[str, Any]:
    params: dict[str, Any] = {k: v[0] for k, v in request.query.items()}
    body = request.body
    if isinstance(body, dict) and "_raw" in body:  # form-encoded
        params.update({k: v[0] for k, v in parse_qs(body["_raw"]).items()})
    elif isinstance(body, dict):
        params.update(body)
    return params


def _int(value: Any) -> int | None:
    return int(value) if value not in (None, "") else None


def _bot(state: _State) -> dict[str, Any]:
    return {"id": int(state.token.split(":")[0]), "is_bot": True, "first_name": "Hermes",
            "username": "hermes_test_bot"}


def _chat(state: _State, params: dict[str, Any]) -> dict[str, Any]:
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


def _message(state: _State, chat: dict[str, Any], message: SentMessage) -> dict[str, Any]:
    data = {"message_id": message.message_id, "date": int(time.time()), "chat": chat,
            "from": _bot(state), "text": message.edits[-1] if message.edits else message.plain}
    if message.message_thread_id is not None:
        data["message_thread_id"] = message.message_thread_id
    return data


class FakeTelegram(ServedInBackground):
    """The fake Bot API; ``token`` is the only one it accepts."""

    thread_name = "fake-telegram"

    def __init__(self, token: str = TOKEN):
        self.token = token
        self._state = _State(token)

    def _build(self) -> LocalHTTPServer:
        return LocalHTTPServer(_Handler, self._state)

    @property
    def base_url(self) -> str:
        assert self._server is not None, "start() the fake first"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    # --- what users do -----------------------------------------------------------------------
    def add_chat(self, chat_id: int, chat_type: str = "private", **fields: Any) -> dict[str, Any]:
        """A chat the bot can see (``chat_type``: dm/private, group, supergroup, channel)."""
        chat = {"id": chat_id, "type": CHAT_TYPES[chat_type], **fields}
        with self._state.lock:
            self._state.chats.setdefault(str(chat_id), chat).update(chat)
            return dict(self._state.chats[str(chat_id)])

    def user_message(self, chat_id: int, user_id: int, text: str, *, username: str = "",
                     chat_type: str = "private", thread_id: int | None = None,
                     edited: bool = False, queue: bool = True) -> dict[str, Any]:
        """An update carrying a user's message; queued for ``getUpdates`` unless ``queue`` is
        False (for :meth:`deliver`). Returns the update."""
        state = self._state
        fields: dict[str, Any] = {"title": f"chat {chat_id}"}
        if chat_type in ("dm", "private"):
            fields = {"first_name": username or f"user{user_id}"}
            if username:
                fields["username"] = username
        if thread_id is not None:
            fields["is_forum"] = True
        chat = self.add_chat(chat_id, chat_type, **fields)
        sender = {"id": user_id, "is_bot": False, "first_name": username or f"user{user_id}"}
        if username:
            sender["username"] = username
        with state.lock:
            message: dict[str, Any] = {"message_id": next(state.ids), "date": int(time.time()),
                                       "chat": chat, "from": sender, "text": text}
            if thread_id is not None:
                message.update(message_thread_id=thread_id, is_topic_message=True)
            update = {"update_id": next(state.update_ids),
                      ("edited_message" if edited else "message"): message}
            if queue:
                state.updates.append(update)
                state.lock.notify_all()
        return update

    def deliver(self, update: dict[str, Any], secret: Any = REGISTERED,
                timeout: float = 30.0) -> int:
        """POST ``update`` to the webhook as Telegram does (with the registered secret, another
        ``secret``, or none for None); the HTTP status the bot answered."""
        hook = self.webhook
        assert hook, "no webhook is set: the bot did not call setWebhook"
        headers = {"Content-Type": "application/json"}
        secret = hook.get("secret_token") if secret is REGISTERED else secret
        if secret is not None:
            headers["X-Telegram-Bot-Api-Secret-Token"] = str(secret)
        request = urllib.request.Request(hook["url"], json.dumps(update).encode(), headers,
                                         method="POST")
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                return int(response.status)
        except urllib.error.HTTPError as exc:
            return int(exc.code)

    # --- scripting ---------------------------------------------------------------------------
    def fail(self, method: str, status: int = 429, description: str = "",
             retry_after: int | None = None, times: int = 1) -> None:
        """The next ``times`` calls of ``method`` fail with ``status`` and take no effect."""
        description = description or (f"Too Many Requests: retry after {retry_after}"
                                      if status == 429 else f"HTTP {status}")
        with self._state.lock:
            self._state.failures.setdefault(method, []).extend(
                _Failure(status, description, retry_after) for _ in range(times))

    # --- what the bot did --------------------------------------------------------------------
    @property
    def sent(self) -> list[SentMessage]:
        with self._state.lock:
            return list(self._state.sent)

    @property
    def actions(self) -> list[tuple[str, str]]:
        with self._state.lock:
            return list(self._state.actions)

    @property
    def webhook(self) -> dict[str, Any]:
        with self._state.lock:
            return dict(self._state.webhook)

    @property
    def confirmed(self) -> int:
        """The highest ``offset`` a ``getUpdates`` confirmed updates with."""
        with self._state.lock:
            return self._state.confirmed

    @property
    def pending(self) -> list[dict[str, Any]]:
        """The updates not confirmed yet."""
        with self._state.lock:
            return list(self._state.updates)

    def answers(self, method: str | None = None) -> list[Answer]:
        """The calls answered (of ``method``), in order, with their status and time."""
        with self._state.lock:
            return [a for a in self._state.answers if method is None or a.method == method]

    def requests(self, method: str | None = None) -> list[RecordedRequest]:
        with self._state.lock:
            return [r for r in self._state.requests
                    if method is None or r.path.endswith(f"/{method}")]

    def texts(self, chat_id: int | str) -> list[str]:
        return [m.plain for m in self.sent if m.chat_id == str(chat_id)]

    def wait_sent(self, count: int, chat_id: int | str | None = None,
                  timeout: float = 30.0) -> list[SentMessage]:
        """The first ``count`` messages sent (to ``chat_id``), once there are that many;
        AssertionError after ``timeout`` seconds."""
        state = self._state

        def matching() -> list[SentMessage]:
            return [m for m in state.sent if chat_id is None or m.chat_id == str(chat_id)]

        with state.lock:
            if not state.lock.wait_for(lambda: len(matching()) >= count, timeout):
                raise AssertionError(f"{len(matching())} of {count} messages sent within "
                                     f"{timeout}s: {[m.plain for m in matching()]}")
            return matching()[:count]

    def wait_until(self, condition: Any, timeout: float = 30.0) -> None:
        """Block until ``condition(fake)`` is true (checked whenever a request changes state)."""
        with self._state.lock:
            if not self._state.lock.wait_for(lambda: condition(self), timeout):
                raise AssertionError(f"condition not met within {timeout}s")

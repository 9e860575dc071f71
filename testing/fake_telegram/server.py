"""The fake Telegram Bot API server (its methods: :mod:`.methods`). A test queues what
users write (:meth:`FakeTelegram.user_message`), reads what the bot sent (:attr:`sent`,
:meth:`wait_sent`), scripts failures (:meth:`fail`, e.g. a 429 with ``retry_after``) and, in
webhook mode, has "Telegram" post an update (:meth:`deliver`)."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from typing import Any

from ..local_server import LocalHTTPServer, RecordedRequest, ServedInBackground
from .files import SentMedia, voice_message
from .methods import CHAT_TYPES, TOKEN, Answer, SentMessage, Failure, Handler, State

REGISTERED = object()  # deliver(): send the secret setWebhook registered


class FakeTelegram(ServedInBackground):
    """The fake Bot API; ``token`` is the only one it accepts."""

    thread_name = "fake-telegram"

    def __init__(self, token: str = TOKEN):
        self.token = token
        self._state = State(token)

    def _build(self) -> LocalHTTPServer:
        return LocalHTTPServer(Handler, self._state)

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

    def user_voice(self, chat_id: int, user_id: int, audio: bytes, *, caption: str = "",
                   mime_type: str = "audio/ogg", kind: str = "voice",
                   **options: Any) -> dict[str, Any]:
        """An update carrying a voice note (``kind="audio"``: an audio file) of ``audio``,
        downloadable through ``getFile``; ``options`` as :meth:`user_message`'s."""
        with self._state.lock:
            note = voice_message(self._state, audio, mime_type=mime_type, kind=kind)
        if caption:
            options["caption"] = caption
        return self.user_message(chat_id, user_id, "", **{kind: note}, **options)

    def user_message(self, chat_id: int, user_id: int, text: str, *, username: str = "",
                     chat_type: str = "private", thread_id: int | None = None,
                     edited: bool = False, queue: bool = True,
                     **fields_of_message: Any) -> dict[str, Any]:
        """An update carrying a user's message; queued for ``getUpdates`` unless ``queue`` is
        False (for :meth:`deliver`). Returns the update. ``fields_of_message`` go into the
        message as they are (``photo``, ``caption``, ...); an empty ``text`` is left out."""
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
                                       "chat": chat, "from": sender, "text": text,
                                       **fields_of_message}
            if not text:
                del message["text"]
            if thread_id is not None:
                message.update(message_thread_id=thread_id, is_topic_message=True)
            update = {"update_id": next(state.update_ids),
                      ("edited_message" if edited else "message"): message}
            if queue:
                state.updates.append(update)
                state.lock.notify_all()
        return update

    def add_file(self, data: bytes, name: str = "file") -> dict[str, Any]:
        """A file users sent, for ``getFile`` and its download URL; its ``file_id`` and
        ``file_unique_id`` and ``file_size``."""
        with self._state.lock:
            number = next(self._state.ids)
            file_id = f"file-{number}"
            self._state.files[file_id] = (f"uploads/{number}-{name}", data)
        return {"file_id": file_id, "file_unique_id": f"u{number}", "file_size": len(data)}

    def user_photo(self, chat_id: int, user_id: int, data: bytes, *, caption: str = "",
                   width: int = 0, height: int = 0, **options: Any) -> dict[str, Any]:
        """A user's photo as Telegram sends it: ``photo`` lists a thumbnail and the full
        size (the largest last), each a file; ``caption`` is the text."""
        thumbnail = self.add_file(data[: max(1, len(data) // 4)], "thumb.jpg")
        full = self.add_file(data, "photo.jpg")
        sizes = [{**thumbnail, "width": max(1, width // 4), "height": max(1, height // 4)},
                 {**full, "width": width, "height": height}]
        fields = {"photo": sizes, **({"caption": caption} if caption else {})}
        return self.user_message(chat_id, user_id, "", **fields, **options)

    def user_document(self, chat_id: int, user_id: int, data: bytes, *, file_name: str,
                      mime_type: str, caption: str = "", **options: Any) -> dict[str, Any]:
        """A file sent as a document (uncompressed), e.g. a PNG screenshot."""
        document = {**self.add_file(data, file_name), "file_name": file_name,
                    "mime_type": mime_type}
        fields = {"document": document, **({"caption": caption} if caption else {})}
        return self.user_message(chat_id, user_id, "", **fields, **options)

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
                Failure(status, description, retry_after) for _ in range(times))

    # --- what the bot did --------------------------------------------------------------------
    @property
    def sent(self) -> list[SentMessage]:
        with self._state.lock:
            return list(self._state.sent)

    @property
    def media(self) -> list[SentMedia]:
        """The files the bot uploaded (sendVoice, sendPhoto, ...), in order."""
        with self._state.lock:
            return list(self._state.media)

    def wait_media(self, count: int, timeout: float = 30.0) -> list[SentMedia]:
        """The first ``count`` uploads, once there are that many."""
        with self._state.lock:
            if not self._state.lock.wait_for(lambda: len(self._state.media) >= count, timeout):
                raise AssertionError(f"{len(self._state.media)} of {count} files sent within "
                                     f"{timeout}s")
            return list(self._state.media[:count])

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

"""What the fake chat services (WhatsApp, Signal, Mattermost) share: their state behind one
lock, the messages the bot sent (:meth:`FakeChat.wait_sent`), scripted failures
(:meth:`FakeChat.fail`), the files users attach (:meth:`FakeChat.add_file`) and every request
recorded. Each fake is a :class:`FakeChat` whose handler serves the service's real wire
format."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from .local_server import LocalHTTPServer, RecordedRequest, ServedInBackground, read_request

WAIT = 30.0


@dataclass
class Sent:
    """A message the bot sent (or edited): where, its text, the id the fake gave it."""

    chat_id: str
    text: str
    message_id: str
    reply_to: str | None = None
    thread_id: str | None = None
    edits: list[str] = field(default_factory=list)


@dataclass
class ChatState:
    token: str
    lock: threading.Condition = field(default_factory=threading.Condition)
    closing: threading.Event = field(default_factory=threading.Event)
    ids: Any = field(default_factory=lambda: itertools.count(1))
    sent: list[Sent] = field(default_factory=list)
    requests: list[RecordedRequest] = field(default_factory=list)
    failures: dict[str, list[tuple[int, float | None]]] = field(default_factory=dict)
    files: dict[str, tuple[bytes, str, str]] = field(default_factory=dict)  # id: data, type, name
    receipts: list[Any] = field(default_factory=list)  # read receipts / marks the bot sent

    def record(self, request: RecordedRequest) -> None:
        with self.lock:
            self.requests.append(request)
            self.lock.notify_all()

    def take_failure(self, route: str) -> tuple[int, float | None] | None:
        with self.lock:
            queued = self.failures.get(route)
            return queued.pop(0) if queued else None

    def add_sent(self, sent: Sent) -> Sent:
        with self.lock:
            self.sent.append(sent)
            self.lock.notify_all()
        return sent

    def add_receipt(self, receipt: Any) -> None:
        with self.lock:
            self.receipts.append(receipt)
            self.lock.notify_all()


class ChatHandler(BaseHTTPRequestHandler):
    """A fake service's request handler: every request recorded, then :meth:`serve`."""

    server: Any
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        state = self.server.state
        request = read_request(self)
        state.record(request)
        self.serve(state, request)

    do_POST = do_PUT = do_GET

    def serve(self, state: Any, request: RecordedRequest) -> None:
        raise NotImplementedError

    def file(self, state: ChatState, file_id: str) -> tuple[bytes, str, str] | None:
        with state.lock:
            return state.files.get(file_id)

    def send_bytes(self, data: bytes, media_type: str) -> None:
        self.send_response(200)
        self.send_header("content-type", media_type)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class FakeChat(ServedInBackground):
    """The shared test surface; subclasses set ``handler`` and build their state."""

    handler: Any
    _state: ChatState

    def _build(self) -> LocalHTTPServer:
        return LocalHTTPServer(self.handler, self._state)

    @property
    def base_url(self) -> str:
        assert self._server is not None, "start() the fake first"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def token(self) -> str:
        return self._state.token

    def add_file(self, data: bytes, media_type: str, name: str) -> str:
        """A file a user attaches; its id."""
        with self._state.lock:
            file_id = f"file{next(self._state.ids)}"
            self._state.files[file_id] = (data, media_type, name)
        return file_id

    def fail(self, route: str, status: int = 429, retry_after: float | None = None,
             times: int = 1) -> None:
        """The next ``times`` calls of ``route`` (the fake's name for it, e.g. ``"send"``)
        fail with ``status`` and take no effect."""
        with self._state.lock:
            self._state.failures.setdefault(route, []).extend(
                [(status, retry_after)] * times)

    @property
    def sent(self) -> list[Sent]:
        with self._state.lock:
            return list(self._state.sent)

    @property
    def receipts(self) -> list[Any]:
        with self._state.lock:
            return list(self._state.receipts)

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._state.lock:
            return list(self._state.requests)

    def texts(self, chat_id: str) -> list[str]:
        return [m.text for m in self.sent if m.chat_id == str(chat_id)]

    def wait_sent(self, count: int, chat_id: str | None = None,
                  timeout: float = WAIT) -> list[Sent]:
        """The first ``count`` messages sent (to ``chat_id``), once there are that many."""
        def matching() -> list[Sent]:
            return [m for m in self._state.sent if chat_id is None or m.chat_id == str(chat_id)]

        with self._state.lock:
            if not self._state.lock.wait_for(lambda: len(matching()) >= count, timeout):
                raise AssertionError(f"{len(matching())} of {count} messages sent within "
                                     f"{timeout}s: {[m.text for m in matching()]}")
            return matching()[:count]

    def wait_until(self, condition: Callable[[], Any], timeout: float = WAIT) -> Any:
        """``condition()``'s value once true (checked whenever the fake's state changes)."""
        with self._state.lock:
            value = self._state.lock.wait_for(condition, timeout)
        if not value:
            raise AssertionError(f"condition not met within {timeout}s")
        return value

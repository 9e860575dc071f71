"""What the fake servers share: a threading HTTP server on a free 127.0.0.1 port, for which a
client hanging up is no error, and its start/close lifecycle in a background thread."""

from __future__ import annotations

import json
import select
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self
from urllib.parse import parse_qs, urlsplit


class LocalHTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 1024  # many clients connecting at once (benchmarks) are not refused

    def __init__(self, handler: type[BaseHTTPRequestHandler], state: Any, port: int = 0):
        self.state = state
        super().__init__(("127.0.0.1", port), handler)  # port 0: a free one

    def handle_error(self, request: Any, client_address: Any) -> None:
        import sys

        if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            super().handle_error(request, client_address)  # a client hanging up is normal


class ServedInBackground:
    """``start``/``close`` and ``with`` for a fake server: subclasses set ``_state`` (with a
    ``closing`` event, set on close) and build their server in :meth:`_build`."""

    thread_name = "fake-server"
    _state: Any
    _server: LocalHTTPServer | None = None
    _thread: threading.Thread | None = None

    def _build(self) -> LocalHTTPServer:
        raise NotImplementedError

    def start(self) -> Self:
        if self._server is None:
            self._server = self._build()
            self._thread = threading.Thread(target=self._server.serve_forever,
                                            kwargs={"poll_interval": 0.05},
                                            name=self.thread_name, daemon=True)
            self._thread.start()
        return self

    def close(self) -> None:
        self._state.closing.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.close()


def send_json_head(handler: BaseHTTPRequestHandler, status: int, length: int,
                   headers: dict[str, str] | None = None) -> None:
    """The status line and headers of a JSON answer of ``length`` bytes."""
    handler.send_response(status)
    handler.send_header("content-type", "application/json")
    handler.send_header("content-length", str(length))
    for key, value in (headers or {}).items():
        handler.send_header(key, value)
    handler.end_headers()


def hold_request(handler: BaseHTTPRequestHandler, seconds: float,
                 stop: Callable[[], bool]) -> str:
    """Hold a request ``seconds`` before it is answered: ``""`` when the time is up,
    ``"stopped"`` when ``stop()`` turns true, ``"gone"`` when the client hung up (both
    close the connection: the request gets no answer)."""
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        if stop():
            handler.close_connection = True
            return "stopped"
        readable, _, _ = select.select([handler.connection], [], [], min(left, 0.05))
        if readable:
            try:
                gone = handler.connection.recv(1, socket.MSG_PEEK) == b""
            except OSError:
                gone = True
            if gone:
                handler.close_connection = True
                return "gone"
            time.sleep(min(left, 0.05))  # pipelined data: keep waiting
    return ""


@dataclass
class RecordedRequest:
    """One request a fake server received."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]  # lower-case names
    body: Any = None  # parsed JSON; {"_raw": text} when it was not JSON
    raw: bytes = b""  # the body as received (multipart uploads: see :func:`multipart`)

    def param(self, name: str) -> str | None:
        """One query parameter's (first) value."""
        values = self.query.get(name)
        return values[0] if values else None


def read_request(handler: BaseHTTPRequestHandler) -> RecordedRequest:
    """The request ``handler`` is serving, its JSON body read and parsed."""
    length = int(handler.headers.get("content-length") or 0)
    raw = handler.rfile.read(length) if length else b""
    try:
        body = json.loads(raw) if raw else None
    except ValueError:
        body = {"_raw": raw.decode("utf-8", "replace")}
    url = urlsplit(handler.path)
    return RecordedRequest(handler.command, url.path, parse_qs(url.query),
                           {k.lower(): v for k, v in handler.headers.items()}, body, raw)


@dataclass
class Part:
    """One field of a ``multipart/form-data`` body (``filename`` set for a file)."""

    name: str
    content: bytes
    filename: str | None = None
    content_type: str = ""

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", "replace")


def multipart(request: RecordedRequest) -> dict[str, Part]:
    """The fields of a ``multipart/form-data`` request by name (empty for any other body)."""
    from email.parser import BytesParser
    from email.policy import HTTP

    content_type = request.headers.get("content-type", "")
    if not content_type.startswith("multipart/form-data"):
        return {}
    message = BytesParser(policy=HTTP).parsebytes(
        f"Content-Type: {content_type}\r\n\r\n".encode() + request.raw)
    parts: dict[str, Part] = {}
    for item in message.iter_parts():
        name = item.get_param("name", header="content-disposition")
        if name:
            parts[str(name)] = Part(str(name), item.get_payload(decode=True) or b"",
                                    item.get_filename(), item.get_content_type())
    return parts


def send_json(handler: BaseHTTPRequestHandler, status: int, data: Any,
              headers: dict[str, str] | None = None) -> None:
    """Answer with ``data`` as JSON; a client that hung up is no error."""
    payload = json.dumps(data).encode()
    try:
        send_json_head(handler, status, len(payload), headers)
        handler.wfile.write(payload)
    except (BrokenPipeError, ConnectionResetError):
        handler.close_connection = True

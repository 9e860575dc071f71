"""What the fake servers share: a threading HTTP server on a free 127.0.0.1 port, for which a
client hanging up is no error, and its start/close lifecycle in a background thread."""

from __future__ import annotations

import select
import socket
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self


class LocalHTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, handler: type[BaseHTTPRequestHandler], state: Any):
        self.state = state
        super().__init__(("127.0.0.1", 0), handler)

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

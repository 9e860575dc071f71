"""A fake web site on 127.0.0.1 for the fetcher and the local extractor: pages, redirects,
huge, slow, stalled and binary bodies, over HTTP or HTTPS.

    with FakePageServer() as site:
        site.page("/tea", "<html>...</html>")
        site.redirect("/go", "http://127.0.0.1:1/admin")     # where an attacker would send you
        site.huge("/big", 20_000_000)                          # streamed, never held in memory
        site.slow("/drip", chunks=100, delay=0.05)             # a byte every 50 ms
        site.stall("/stuck", seconds=30)                       # headers, then nothing
        fetch(site.url + "/tea", allow_private=True)
        assert site.requests[-1].headers["host"] == ...

An unknown path gets 404. ``tls`` (an ``ssl.SSLContext`` with the server's certificate) serves
HTTPS. Every request is recorded (method, path, lower-case headers).
"""

from __future__ import annotations

import ssl
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from ..local_server import LocalHTTPServer, ServedInBackground


@dataclass
class PageRequest:
    method: str
    path: str
    headers: dict[str, str]  # lower-case names


@dataclass
class Route:
    status: int = 200
    content_type: str = "text/html; charset=utf-8"
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    size: int = 0  # huge: bytes streamed, body repeated
    declare_length: bool = True
    chunks: int = 0  # slow: chunks sent, one every `delay` seconds
    delay: float = 0.0
    stall: float = 0.0  # stall: seconds of silence after the headers


@dataclass
class _State:
    routes: dict[str, Route] = field(default_factory=dict)
    requests: list[PageRequest] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    closing: threading.Event = field(default_factory=threading.Event)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: "_Server"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802 (the handler's API)
        state = self.server.state
        path = self.path.split("?", 1)[0]
        with state.lock:
            state.requests.append(PageRequest(self.command, self.path,
                                              {k.lower(): v for k, v in self.headers.items()}))
            route = state.routes.get(path)
        if route is None:
            route = Route(404, "text/plain; charset=utf-8", b"not found")
        try:
            self._answer(route)
        except (ConnectionError, TimeoutError, ssl.SSLError):
            self.close_connection = True  # the client hung up (a cap did its job)

    def _answer(self, route: Route) -> None:
        self.send_response(route.status)
        self.send_header("content-type", route.content_type)
        length = route.size or len(route.body) * max(route.chunks, 1)
        if route.declare_length and not route.stall:
            self.send_header("content-length", str(length))
        else:
            self.close_connection = True  # the body ends when the connection does
        for key, value in route.headers.items():
            self.send_header(key, value)
        self.end_headers()
        if route.stall:
            self._wait(route.stall)
        elif route.size:
            for piece in _pieces(route.body, route.size):
                self.wfile.write(piece)
        elif route.chunks:
            for _ in range(route.chunks):
                self.wfile.write(route.body)
                self.wfile.flush()
                if self._wait(route.delay):
                    return
        else:
            self.wfile.write(route.body)

    def _wait(self, seconds: float) -> bool:
        """Sleep, unless the server closes first (then True)."""
        return self.server.state.closing.wait(seconds)


def _pieces(body: bytes, size: int) -> Iterator[bytes]:
    block = (body or b"x") * max(1, 65536 // max(len(body), 1))
    sent = 0
    while sent < size:
        piece = block[: size - sent]
        sent += len(piece)
        yield piece


class _Server(LocalHTTPServer):
    state: _State


class FakePageServer(ServedInBackground):
    """A fake web site (see the module's docstring)."""

    thread_name = "fake-pages"

    def __init__(self, *, tls: ssl.SSLContext | None = None):
        self._state = _State()
        self._tls = tls

    def _build(self) -> LocalHTTPServer:
        server = _Server(_Handler, self._state)
        if self._tls is not None:
            server.socket = self._tls.wrap_socket(server.socket, server_side=True)
        return server

    @property
    def port(self) -> int:
        assert self._server is not None, "start the server first"
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"{'https' if self._tls else 'http'}://127.0.0.1:{self.port}"

    def url_for(self, host: str, path: str = "/") -> str:
        """This server's URL under another host name (resolve it to 127.0.0.1 in the test)."""
        return f"{'https' if self._tls else 'http'}://{host}:{self.port}{path}"

    @property
    def requests(self) -> list[PageRequest]:
        with self._state.lock:
            return list(self._state.requests)

    def _add(self, path: str, route: Route) -> None:
        with self._state.lock:
            self._state.routes[path] = route

    def page(self, path: str, body: str | bytes, content_type: str = "text/html; charset=utf-8",
             status: int = 200, headers: dict[str, str] | None = None) -> None:
        data = body.encode("utf-8") if isinstance(body, str) else body
        self._add(path, Route(status, content_type, data, dict(headers or {})))

    def redirect(self, path: str, location: str, status: int = 302) -> None:
        self._add(path, Route(status, "text/plain", b"", {"location": location}))

    def huge(self, path: str, size: int, content_type: str = "text/html; charset=utf-8",
             declare_length: bool = False) -> None:
        """``size`` bytes of filler (without a content-length unless ``declare_length``)."""
        self._add(path, Route(200, content_type, b"<p>filler</p>\n", size=size,
                              declare_length=declare_length))

    def slow(self, path: str, chunks: int, delay: float, piece: bytes = b"<p>drip</p>\n") -> None:
        self._add(path, Route(200, "text/html; charset=utf-8", piece, chunks=chunks,
                              delay=delay))

    def stall(self, path: str, seconds: float) -> None:
        self._add(path, Route(200, "text/html; charset=utf-8", b"", stall=seconds))

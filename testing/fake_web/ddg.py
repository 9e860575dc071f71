"""A fake DuckDuckGo for the ddgs package, reached over real TLS: an HTTP proxy on 127.0.0.1
that answers ``CONNECT html.duckduckgo.com:443`` itself, with a certificate for that host
signed by a throw-away authority, and serves ``POST /html/`` (form ``q``, ``b``, ``l``) as
DuckDuckGo's HTML results page. A CONNECT to any other host is refused (403), so a client
using the proxy never reaches the network.

    with FakeDuckDuckGo(tmp_path) as ddg:
        ddg.add("Green tea", "https://tea.example/green", "All about green tea")
        ddg.fail(202)        # the next search gets DuckDuckGo's rate-limit answer
        ddg.hang(30)         # the one after is held (until the client gives up)
        ...  # DDGS(proxy=ddg.proxy_url, verify=str(ddg.ca_file))
        assert ddg.requests[-1].form["q"] == "green tea"

Results are the added documents with every word of the query (see ``Document``); none is
DuckDuckGo's "No results." page. Faults are taken one per search, in order.
"""

from __future__ import annotations

import ssl
import threading
from collections import deque
from dataclasses import dataclass, field
from html import escape
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any, Self
from urllib.parse import parse_qs

from ..local_server import LocalHTTPServer, ServedInBackground
from .base import Document
from .tls import make_tls

HOST = "html.duckduckgo.com"
_FAULT_PAGES = {202: "<html><body><div class='anomaly-modal'>Unfortunately, bots use "
                     "DuckDuckGo too.</div></body></html>",
                403: "<html><body>403 Forbidden</body></html>",
                500: "<html><body>500 Internal Server Error</body></html>"}


@dataclass(frozen=True)
class DuckDuckGoRequest:
    """One request made to the fake DuckDuckGo through the tunnel."""

    method: str
    path: str
    headers: dict[str, str]  # lower-case names
    form: dict[str, str]  # the POSTed fields (first value of each)


@dataclass(frozen=True)
class _Fault:
    status: int = 0  # 0: answer normally (after the hang)
    hang: float = 0.0


@dataclass
class _State:
    tls: ssl.SSLContext
    documents: list[Document] = field(default_factory=list)
    faults: deque[_Fault] = field(default_factory=deque)
    requests: list[DuckDuckGoRequest] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)  # CONNECT targets turned away
    lock: threading.Lock = field(default_factory=threading.Lock)
    closing: threading.Event = field(default_factory=threading.Event)


class _Quiet(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: "_Server"

    def log_message(self, format: str, *args: Any) -> None:
        pass


class _ProxyHandler(_Quiet):
    """The proxy: tunnels to DuckDuckGo end here; everything else is refused."""

    def do_CONNECT(self) -> None:  # noqa: N802 (the handler's API)
        state = self.server.state
        if self.path != f"{HOST}:443":
            with state.lock:
                state.refused.append(self.path)
            self.send_error(403, f"the fake DuckDuckGo proxy only tunnels to {HOST}:443")
            return
        self.send_response(200, "Connection established")
        self.end_headers()
        self.close_connection = True
        try:
            tunnel = state.tls.wrap_socket(self.connection, server_side=True)
        except (ssl.SSLError, OSError):
            return  # the client gave up on the handshake
        try:
            _DuckDuckGoHandler(tunnel, self.client_address, self.server)
        finally:
            tunnel.close()

    def do_GET(self) -> None:  # noqa: N802 (the handler's API)
        with self.server.state.lock:
            self.server.state.refused.append(self.path)
        self.send_error(403, "the fake DuckDuckGo proxy only tunnels (CONNECT)")

    do_POST = do_GET


class _DuckDuckGoHandler(_Quiet):
    """html.duckduckgo.com, inside the tunnel."""

    def do_POST(self) -> None:  # noqa: N802 (the handler's API)
        state = self.server.state
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        form = {k: v[0] for k, v in parse_qs(raw.decode("utf-8", "replace"),
                                             keep_blank_values=True).items()}
        with state.lock:
            state.requests.append(DuckDuckGoRequest(
                self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, form))
            fault = state.faults.popleft() if state.faults else None
        if fault is not None and fault.hang and state.closing.wait(fault.hang):
            return  # the server is closing: no answer
        if fault is not None and fault.status:
            self._send(fault.status, _FAULT_PAGES.get(fault.status, f"HTTP {fault.status}"))
        elif self.command != "POST" or self.path.split("?")[0] != "/html/":
            self._send(404, "<html><body>404 Not Found</body></html>")
        else:
            with state.lock:
                found = [d for d in state.documents if d.matches(form.get("q", ""))]
            self._send(200, results_page(form.get("q", ""), found))

    do_GET = do_POST

    def _send(self, status: int, page: str) -> None:
        payload = page.encode()
        try:
            self.send_response(status)
            self.send_header("content-type", "text/html; charset=UTF-8")
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError):
            self.close_connection = True


def results_page(query: str, documents: list[Document]) -> str:
    """DuckDuckGo's HTML results page, in the markup ddgs parses."""
    rows = "".join(
        f'<div class="result results_links results_links_deep web-result ">'
        f'<div class="links_main links_deep result__body">'
        f'<h2 class="result__title"><a rel="nofollow" class="result__a" '
        f'href="{escape(d.url)}">{escape(d.title)}</a></h2>'
        f'<div class="result__extras"><span class="result__url">{escape(d.url)}</span></div>'
        f'<a class="result__snippet" href="{escape(d.url)}">{escape(d.content)}</a>'
        f'</div></div>' for d in documents)
    if not documents:
        rows = '<div class="no-results">No results.</div>'
    return (f"<!DOCTYPE html><html><head><title>{escape(query)} at DuckDuckGo</title></head>"
            f'<body><div id="links" class="results">{rows}</div></body></html>')


class _Server(LocalHTTPServer):
    state: _State


class FakeDuckDuckGo(ServedInBackground):
    """The fake DuckDuckGo and its proxy (see the module's docstring); ``folder`` holds the
    test authority and certificate (made with the ``openssl`` command)."""

    thread_name = "fake-duckduckgo"

    def __init__(self, folder: Path, documents: list[Document] | None = None):
        server_tls, _ = make_tls(folder, [HOST])
        server_tls.set_alpn_protocols(["http/1.1"])
        self.ca_file = folder / "ca.pem"
        self._state = _State(tls=server_tls, documents=list(documents or []))

    def _build(self) -> LocalHTTPServer:
        return _Server(_ProxyHandler, self._state)

    @property
    def proxy_url(self) -> str:
        if self._server is None:
            raise RuntimeError("FakeDuckDuckGo is not started; use it in a `with`")
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def add(self, title: str, url: str, content: str) -> Self:
        with self._state.lock:
            self._state.documents.append(Document(title, url, content))
        return self

    def fail(self, status: int, times: int = 1) -> Self:
        """Answer the next ``times`` searches with ``status`` (202: DuckDuckGo's rate limit)."""
        return self._queue(_Fault(status=status), times)

    def hang(self, seconds: float = 30.0, times: int = 1) -> Self:
        """Hold the next ``times`` searches for ``seconds`` before answering them."""
        return self._queue(_Fault(hang=seconds), times)

    def _queue(self, fault: _Fault, times: int) -> Self:
        with self._state.lock:
            self._state.faults.extend([fault] * times)
        return self

    @property
    def requests(self) -> list[DuckDuckGoRequest]:
        with self._state.lock:
            return list(self._state.requests)

    @property
    def refused(self) -> list[str]:
        """The CONNECT (or plain proxy) targets the proxy turned away."""
        with self._state.lock:
            return list(self._state.refused)

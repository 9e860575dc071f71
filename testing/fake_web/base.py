"""What the fake web APIs share: documents to find, recorded requests, faults on demand
(an HTTP status with a body and Retry-After, a hang, a malformed answer), HTML pages served
on the same port, and the request plumbing. Each API subclasses :class:`FakeWebAPI` and says
how it authenticates and answers."""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any, Self

from ..local_server import (LocalHTTPServer, RecordedRequest, ServedInBackground,
                            hold_request, read_request, send_json)


@dataclass(frozen=True)
class Document:
    """Something the fake search engines find: every word of a query must occur in it."""

    title: str
    url: str
    content: str
    published: str | None = None  # ISO date

    def matches(self, query: str) -> bool:
        text = f"{self.title} {self.content}".lower()
        return all(word in text for word in query.lower().split())


@dataclass(frozen=True)
class Fault:
    status: int = 0  # 0: answer normally (after the hang)
    hang: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)
    body: Any = None
    raw: bytes | None = None  # sent as is (malformed JSON)


@dataclass
class _State:
    documents: list[Document] = field(default_factory=list)
    pages: dict[str, tuple[str, str]] = field(default_factory=dict)  # path -> (type, body)
    faults: deque[Fault] = field(default_factory=deque)
    requests: list[RecordedRequest] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    closing: threading.Event = field(default_factory=threading.Event)
    hangups: int = 0


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    server: "_Server"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802 (the handler's API)
        state, api = self.server.state, self.server.api
        request = read_request(self)
        with state.lock:
            page = state.pages.get(request.path) if self.command == "GET" else None
            if page is None:
                state.requests.append(request)
                fault = state.faults.popleft() if state.faults else None
            else:
                fault = None
        if page is not None:
            self._send(200, page[1].encode(), {"content-type": page[0]})
            return
        if fault is not None:
            if fault.hang and self._hang(fault.hang):
                return
            if fault.raw is not None:
                self._send(200, fault.raw, {"content-type": "application/json"})
                return
            if fault.status:
                self._json(fault.status, fault.body if fault.body is not None
                           else api.error_body(fault.status, "injected by the fake server"),
                           fault.headers)
                return
        refused = api.refuse(request)
        status, data = refused if refused is not None else api.answer(request)
        self._json(status, data)

    do_POST = do_GET

    def _hang(self, seconds: float) -> bool:
        """Wait; True (no answer) if the client hung up or the server closes."""
        state = self.server.state
        outcome = hold_request(self, seconds, state.closing.is_set)
        if outcome == "gone":
            with state.lock:
                state.hangups += 1
        return bool(outcome)

    def _json(self, status: int, data: Any, headers: dict[str, str] | None = None) -> None:
        if isinstance(data, str):  # a plain-text answer (SearXNG's errors)
            self._send(status, data.encode(), {"content-type": "text/plain; charset=utf-8",
                                               **(headers or {})})
            return
        send_json(self, status, data, headers)

    def _send(self, status: int, payload: bytes, headers: dict[str, str]) -> None:
        try:
            self.send_response(status)
            for key, value in {**headers, "content-length": str(len(payload))}.items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True


class _Server(LocalHTTPServer):
    state: _State

    def __init__(self, api: "FakeWebAPI"):
        self.api = api
        super().__init__(_Handler, api._state)


class FakeWebAPI(ServedInBackground):
    """A fake web API on 127.0.0.1. Subclasses implement :meth:`refuse` (authentication
    and parameter checks) and :meth:`answer`; :meth:`error_body` shapes injected errors."""

    thread_name = "fake-web-api"

    def __init__(self, documents: list[Document] | None = None):
        self._state = _State(documents=list(documents or []))

    def _build(self) -> _Server:
        return _Server(self)

    # --- what a subclass says --------------------------------------------------------------
    def refuse(self, request: RecordedRequest) -> tuple[int, Any] | None:
        return None

    def answer(self, request: RecordedRequest) -> tuple[int, Any]:
        raise NotImplementedError

    def error_body(self, status: int, message: str) -> Any:
        return {"error": message}

    # --- documents and pages ---------------------------------------------------------------
    def add(self, title: str, url: str, content: str, published: str | None = None) -> Self:
        self._state.documents.append(Document(title, url, content, published))
        return self

    def find(self, query: str) -> list[Document]:
        return [d for d in self._state.documents if d.matches(query)]

    def document(self, url: str) -> Document | None:
        return next((d for d in self._state.documents if d.url == url), None)

    def serve_page(self, path: str, html: str, content_type: str = "text/html") -> str:
        """Serve ``html`` at ``path`` on this server (not recorded, never faulted); its URL."""
        self._state.pages[path] = (f"{content_type}; charset=utf-8", html)
        return f"{self.url}{path}"

    # --- faults ----------------------------------------------------------------------------
    def fail(self, status: int, times: int = 1, *, retry_after: str | None = None,
             body: Any = None) -> Self:
        """Answer the next ``times`` API requests with ``status`` (and ``Retry-After``)."""
        headers = {"Retry-After": retry_after} if retry_after is not None else {}
        return self._queue(Fault(status=status, headers=headers, body=body), times)

    def redirect(self, location: str, status: int = 301, times: int = 1) -> Self:
        """Redirect the next ``times`` API requests to ``location``."""
        return self._queue(Fault(status=status, headers={"Location": location}, body={}),
                           times)

    def hang(self, seconds: float = 30.0, times: int = 1) -> Self:
        """Hold the next ``times`` API requests for ``seconds`` (until the client gives up)."""
        return self._queue(Fault(hang=seconds), times)

    def malformed(self, times: int = 1, raw: bytes = b'{"results": [') -> Self:
        """Answer the next ``times`` API requests with 200 and a body that is not JSON."""
        return self._queue(Fault(raw=raw), times)

    def _queue(self, fault: Fault, times: int) -> Self:
        with self._state.lock:
            self._state.faults.extend([fault] * times)
        return self

    # --- inspection ------------------------------------------------------------------------
    @property
    def requests(self) -> list[RecordedRequest]:
        with self._state.lock:
            return list(self._state.requests)

    @property
    def hangups(self) -> int:
        return self._state.hangups

    @property
    def url(self) -> str:
        if self._server is None:
            raise RuntimeError(f"{type(self).__name__} is not started; use it in a `with`")
        return f"http://127.0.0.1:{self._server.server_address[1]}"

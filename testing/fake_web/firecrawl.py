"""A fake Firecrawl API on 127.0.0.1 for tests: ``/v2/search`` and ``/v2/scrape`` (and their
``/v1`` shapes), ``Authorization: Bearer`` checked, parameters validated as the service does,
and faults on demand.

    with FakeFirecrawlServer(api_key="fc-test") as firecrawl:
        firecrawl.result("Green tea", "https://tea.example/green", "All about green tea")
        firecrawl.page("https://tea.example/green", "# Green tea\\n\\nBrew at 80°C.", title="Green tea")
        firecrawl.fail(429, retry_after="7")      # the next request is rate-limited
        firecrawl.hang(5)                         # the next one hangs for 5 s
        firecrawl.malformed()                     # the next one answers 200 with HTML
        ...  # FIRECRAWL_API_URL=firecrawl.url, FIRECRAWL_API_KEY=fc-test
        assert firecrawl.requests[-1].body["formats"] == ["markdown"]

Search answers the seeded results (all of them, up to ``limit``); scrape answers a seeded page,
or a page whose site answered 404. Faults are taken one per request, in order.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from ..local_server import LocalHTTPServer, ServedInBackground, send_json_head


@dataclass
class FirecrawlRequest:
    method: str
    path: str
    headers: dict[str, str]  # lower-case names
    body: Any = None


@dataclass
class _Fault:
    status: int = 0
    hang: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)
    body: Any = None
    raw: bytes | None = None  # sent as is, with a 200


@dataclass
class _State:
    api_key: str | None
    results: list[dict[str, Any]] = field(default_factory=list)
    pages: dict[str, dict[str, Any]] = field(default_factory=dict)
    faults: deque[_Fault] = field(default_factory=deque)
    requests: list[FirecrawlRequest] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    closing: threading.Event = field(default_factory=threading.Event)
    in_flight: int = 0
    max_in_flight: int = 0  # the most requests served at once


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: "_Server"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:  # noqa: N802 (the handler's API)
        state = self.server.state
        with state.lock:
            state.in_flight += 1
            state.max_in_flight = max(state.max_in_flight, state.in_flight)
        try:
            self._serve()
        finally:
            with state.lock:
                state.in_flight -= 1

    do_GET = do_POST

    def _serve(self) -> None:
        state = self.server.state
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = {"_raw": raw.decode("utf-8", "replace")}
        with state.lock:
            state.requests.append(FirecrawlRequest(
                self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body))
            fault = state.faults.popleft() if state.faults else None
        if fault is not None:
            if fault.hang and state.closing.wait(fault.hang):
                return
            if fault.raw is not None:
                self._send(200, fault.raw, "text/html")
                return
            if fault.status:
                self._json(fault.status, fault.body or {
                    "success": False, "error": f"fake Firecrawl: injected HTTP {fault.status}"},
                    fault.headers)
                return
        if state.api_key is not None and \
                self.headers.get("authorization") != f"Bearer {state.api_key}":
            self._json(401, {"success": False, "error": "Unauthorized: Invalid token"})
            return
        self._json(*self._route(body if isinstance(body, dict) else {}))

    def _route(self, body: dict[str, Any]) -> tuple[int, Any]:
        version, _, endpoint = self.path.strip("/").partition("/")
        if self.command != "POST" or version not in ("v1", "v2") or \
                endpoint not in ("search", "scrape"):
            return 404, {"success": False, "error": f"no route {self.command} {self.path}"}
        problems = _problems(endpoint, body)
        if problems:
            return 400, {"success": False, "error": "Bad Request", "details": problems}
        state = self.server.state
        if endpoint == "search":
            with state.lock:
                found = state.results[: int(body.get("limit", 5))]
            rows = [{**row, "position": i} for i, row in enumerate(found, 1)]
            return 200, {"success": True, "data": {"web": rows} if version == "v2" else rows}
        with state.lock:
            page = state.pages.get(body["url"])
        if page is None:
            page = {"markdown": "", "metadata": {"title": "404 Not Found",
                                                 "sourceURL": body["url"], "statusCode": 404}}
        return 200, {"success": True, "data": page}

    def _json(self, status: int, data: Any, headers: dict[str, str] | None = None) -> None:
        payload = json.dumps(data).encode()
        send_json_head(self, status, len(payload), headers)
        self.wfile.write(payload)

    def _send(self, status: int, payload: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


def _problems(endpoint: str, body: dict[str, Any]) -> list[str]:
    """What the service's schema validation would reject."""
    problems = []
    if endpoint == "search":
        if not isinstance(body.get("query"), str) or not body["query"].strip():
            problems.append("query: Required (a non-empty string)")
        limit = body.get("limit", 5)
        if not isinstance(limit, int) or not 1 <= limit <= 100:
            problems.append("limit: a whole number from 1 to 100")
    else:
        url = body.get("url")
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            problems.append("url: Invalid url")
        formats = body.get("formats", ["markdown"])
        if not isinstance(formats, list) or not formats:
            problems.append("formats: a non-empty list")
    return problems


class _Server(LocalHTTPServer):
    state: _State


class FakeFirecrawlServer(ServedInBackground):
    """The fake Firecrawl API (see the module's docstring)."""

    thread_name = "fake-firecrawl"

    def __init__(self, api_key: str | None = "fc-test"):
        self._state = _State(api_key=api_key)

    def _build(self) -> LocalHTTPServer:
        return _Server(_Handler, self._state)

    @property
    def url(self) -> str:
        assert self._server is not None, "start the server first"
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def requests(self) -> list[FirecrawlRequest]:
        with self._state.lock:
            return list(self._state.requests)

    @property
    def max_in_flight(self) -> int:
        """The most requests the server was answering at the same time."""
        return self._state.max_in_flight

    # --- data --------------------------------------------------------------------------
    def result(self, title: str, url: str, description: str = "") -> None:
        with self._state.lock:
            self._state.results.append({"title": title, "url": url, "description": description})

    def page(self, url: str, markdown: str, *, title: str = "", status: int = 200) -> None:
        with self._state.lock:
            self._state.pages[url] = {"markdown": markdown, "metadata": {
                "title": title, "sourceURL": url, "url": url, "statusCode": status}}

    # --- faults ------------------------------------------------------------------------
    def fail(self, status: int, times: int = 1, *, retry_after: str | None = None,
             body: Any = None) -> None:
        headers = {"Retry-After": retry_after} if retry_after is not None else {}
        self._queue(_Fault(status=status, headers=headers, body=body), times)

    def hang(self, seconds: float, times: int = 1) -> None:
        """Hold the next requests ``seconds`` before answering them normally."""
        self._queue(_Fault(hang=seconds), times)

    def malformed(self, payload: bytes = b"<html><body>502 Bad Gateway</body></html>",
                  times: int = 1) -> None:
        """Answer 200 with a body that is not the API's JSON."""
        self._queue(_Fault(raw=payload), times)

    def _queue(self, fault: _Fault, times: int) -> None:
        with self._state.lock:
            self._state.faults.extend([fault] * times)

"""A fake web for the web tool tests: real HTTP on 127.0.0.1 serving a JSON search API
(``/search``) and pages (``/page/<name>``), with faults on demand (HTTP errors, 429 with
Retry-After, malformed JSON, a hang until released) and every request recorded."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlsplit

from hermes_agent.testing.local_server import LocalHTTPServer, ServedInBackground


@dataclass
class Fault:
    status: int = 500
    body: bytes = b'{"error": "boom"}'
    headers: dict[str, str] = field(default_factory=dict)
    hang: bool = False  # wait until released (or the server closes), then answer


@dataclass
class State:
    pages: dict[str, str] = field(default_factory=dict)
    faults: list[Fault] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)  # "GET /search?q=..." in order
    closing: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)


class Handler(BaseHTTPRequestHandler):
    server: LocalHTTPServer

    def log_message(self, *args: Any) -> None:
        pass

    def _send(self, status: int, body: bytes, kind: str, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("content-type", kind)
        self.send_header("content-length", str(len(body)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        state: State = self.server.state
        parts = urlsplit(self.path)
        with state.lock:
            state.requests.append(f"GET {self.path}")
            fault = state.faults.pop(0) if state.faults and parts.path == "/search" else None
        if fault is not None:
            if fault.hang:
                while not (state.release.wait(0.05) or state.closing.is_set()):
                    pass
            self._send(fault.status, fault.body, "application/json", fault.headers)
            return
        if parts.path == "/search":
            query = parse_qs(parts.query)
            q, limit = query.get("q", [""])[0], int(query.get("limit", ["5"])[0])
            base = f"http://127.0.0.1:{self.server.server_port}"
            results = [{"title": f"{q} result {i}", "url": f"{base}/page/{i}",
                        "snippet": f"about {q} ({i})"} for i in range(1, limit + 1)]
            self._send(200, json.dumps({"results": results}).encode(), "application/json")
        elif parts.path.startswith("/page/") and parts.path[6:] in state.pages:
            self._send(200, state.pages[parts.path[6:]].encode(), "text/plain; charset=utf-8")
        else:
            self._send(404, b"not found", "text/plain")


class FakeWeb(ServedInBackground):
    thread_name = "fake-web"

    def __init__(self) -> None:
        self._state = State()

    def _build(self) -> LocalHTTPServer:
        return LocalHTTPServer(Handler, self._state)

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_port}"

    def page(self, name: str, text: str) -> str:
        self._state.pages[name] = text
        return f"{self.url}/page/{name}"

    def fail(self, *faults: Fault) -> None:
        self._state.faults.extend(faults)

    def release(self) -> None:
        self._state.release.set()

    @property
    def requests(self) -> list[str]:
        with self._state.lock:
            return list(self._state.requests)

    def count(self, prefix: str) -> int:
        return sum(1 for r in self.requests if r.startswith(f"GET {prefix}"))

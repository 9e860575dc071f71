"""A fake Mem0 Platform server on 127.0.0.1 speaking the REST wire format, for tests.

    with FakeMem0Server(api_key="m0-test") as mem0:
        client_env = {"MEM0_API_KEY": "m0-test", "MEM0_HOST": mem0.url}
        ...
        assert mem0.requests[-1].path == "/v2/memories/search/"

Endpoints: ``GET /v1/ping/``, ``POST /v1/memories/`` (add), ``POST /v2/memories/`` (list with
filters), ``POST /v2/memories/search/``, ``GET``/``PUT``/``DELETE /v1/memories/{id}/``. With
``api_key`` set, a request without ``Authorization: Token <api_key>`` gets 401. Faults are
queued with :meth:`fail` and :meth:`hang` and taken one per request, in order; ``always=True``
makes a fault answer every request until :meth:`clear_faults`. A hang ends when its time is up
(then the request is answered normally), when :meth:`release` is called, when the client hangs
up, or when the server closes. Every request is recorded.
"""

from __future__ import annotations

import re
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from ..local_server import (LocalHTTPServer, RecordedRequest, ServedInBackground,
                            hold_request, read_request, send_json)
from .store import ENTITY_FIELDS, FilterError, MemoryStore

_ONE = re.compile(r"^/v1/memories/([^/]+)/$")


@dataclass
class Fault:
    """What to do instead of (or before) answering one request."""

    status: int = 0  # 0: answer normally (after the hang)
    hang: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)
    body: Any = None


@dataclass
class _State:
    store: MemoryStore = field(default_factory=MemoryStore)
    faults: deque[Fault] = field(default_factory=deque)
    always: Fault | None = None
    requests: list[RecordedRequest] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    closing: threading.Event = field(default_factory=threading.Event)
    released: threading.Event = field(default_factory=threading.Event)
    api_key: str | None = None
    hangups: int = 0


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    server: "_Server"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def handle(self) -> None:
        threading.current_thread().name = "fake-mem0-handler"
        super().handle()

    def do_GET(self) -> None:  # noqa: N802 (the handler's API)
        self._serve()

    do_POST = do_PUT = do_DELETE = do_GET

    # --- plumbing --------------------------------------------------------------------------
    def _serve(self) -> None:
        state = self.server.state
        request = read_request(self)
        body = request.body
        with state.lock:
            state.requests.append(request)
            fault = state.faults.popleft() if state.faults else state.always
        if fault is not None:
            if fault.hang and self._hang(fault.hang):
                return
            if fault.status:
                self._json(fault.status, fault.body if fault.body is not None
                           else {"detail": f"fake Mem0 server: injected HTTP {fault.status}"},
                           fault.headers)
                return
        if state.api_key is not None and \
                self.headers.get("authorization") != f"Token {state.api_key}":
            self._json(401, {"detail": "Invalid API key. Check your Authorization header."})
            return
        try:
            status, data = self._route(request.path, body if isinstance(body, dict) else {})
        except FilterError as exc:
            status, data = 400, {"detail": f"invalid filters: {exc}"}
        self._json(status, data)

    def _hang(self, seconds: float) -> bool:
        """Wait; True (stop answering) if the client hung up, the server closes or a
        release came."""
        state = self.server.state
        outcome = hold_request(self, seconds,
                               lambda: state.closing.is_set() or state.released.is_set())
        if outcome == "gone":
            with state.lock:
                state.hangups += 1
        return bool(outcome)

    def _json(self, status: int, data: Any, headers: dict[str, str] | None = None) -> None:
        send_json(self, status, data, headers)

    # --- the API ---------------------------------------------------------------------------
    def _route(self, path: str, body: dict[str, Any]) -> tuple[int, Any]:
        store, method = self.server.state.store, self.command
        if method == "GET" and path == "/v1/ping/":
            return 200, {"status": "ok", "org_id": "fake-org", "project_id": "fake-project"}
        if method == "POST" and path == "/v1/memories/":
            return self._add(body)
        if method == "POST" and path == "/v2/memories/search/":
            if not str(body.get("query") or "").strip():
                return 400, {"detail": "query is required"}
            filters = body.get("filters")
            found = store.search(str(body["query"]), filters, int(body.get("top_k") or 10))
            return 200, {"results": [m.as_json(score) for m, score in found]}
        if method == "POST" and path == "/v2/memories/":
            page, size = int(body.get("page") or 1), int(body.get("page_size") or 100)
            chosen = store.select(body.get("filters"))[(page - 1) * size:page * size]
            return 200, {"results": [m.as_json() for m in chosen]}
        match = _ONE.match(path)
        if match:
            memory_id = match.group(1)
            if method == "GET":
                memory = store.get(memory_id)
            elif method == "PUT":
                metadata = body.get("metadata")
                memory = store.update(memory_id, body.get("text"),
                                      metadata if isinstance(metadata, dict) else None)
            elif method == "DELETE":
                if store.delete(memory_id):
                    return 200, {"message": "Memory deleted successfully!"}
                memory = None
            else:
                return 405, {"detail": f"method {method} not allowed"}
            if memory is None:
                return 404, {"detail": f"Memory with id {memory_id} not found."}
            data = memory.as_json()
            data["text"] = data["memory"]
            return 200, data
        return 404, {"detail": f"fake Mem0 server: no route {method} {path}"}

    def _add(self, body: dict[str, Any]) -> tuple[int, Any]:
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            return 400, {"detail": "messages must be a non-empty list"}
        entity = {k: body.get(k) for k in ENTITY_FIELDS if body.get(k)}
        if not entity:
            return 400, {"detail": "one of user_id, agent_id, app_id or run_id is required"}
        metadata = body.get("metadata") if isinstance(body.get("metadata"), dict) else {}
        infer = body.get("infer", True) is not False
        # A stand-in for fact extraction: with infer, what the user said becomes the memory.
        texts = [str(m.get("content") or "").strip() for m in messages
                 if isinstance(m, dict) and (not infer or m.get("role") == "user")]
        added = [self.server.state.store.add(t, entity, metadata) for t in texts if t]
        return 200, {"results": [{"id": m.id, "memory": m.memory, "event": "ADD"}
                                 for m in added]}


class _Server(LocalHTTPServer):
    state: _State

    def __init__(self, state: _State):
        super().__init__(_Handler, state)


class FakeMem0Server(ServedInBackground):
    """The fake server. Use as a context manager, or call :meth:`start` / :meth:`close`."""

    thread_name = "fake-mem0-server"

    def __init__(self, api_key: str | None = None):
        self._state = _State(api_key=api_key)

    def _build(self) -> _Server:
        return _Server(self._state)

    # --- faults ----------------------------------------------------------------------------
    def fail(self, status: int, times: int = 1, *, retry_after: str | None = None,
             body: Any = None, always: bool = False) -> "FakeMem0Server":
        """Answer the next ``times`` requests (every request with ``always``) with
        ``status``; ``retry_after`` adds that ``Retry-After`` header."""
        headers = {"Retry-After": retry_after} if retry_after is not None else {}
        return self._queue(Fault(status=status, headers=headers, body=body), times, always)

    def hang(self, seconds: float = 60.0, times: int = 1, *,
             always: bool = False) -> "FakeMem0Server":
        """Hold the next ``times`` requests (every request with ``always``) for
        ``seconds`` before answering them."""
        self._state.released.clear()
        return self._queue(Fault(hang=seconds), times, always)

    def release(self) -> None:
        """End every hang now (the held requests get no answer)."""
        self._state.released.set()

    def clear_faults(self) -> None:
        with self._state.lock:
            self._state.faults.clear()
            self._state.always = None

    def _queue(self, fault: Fault, times: int, always: bool) -> "FakeMem0Server":
        with self._state.lock:
            if always:
                self._state.always = fault
            else:
                self._state.faults.extend([fault] * times)
        return self

    # --- data and inspection ---------------------------------------------------------------
    def seed(self, text: str, *, user_id: str | None = None, agent_id: str | None = None,
             metadata: dict[str, Any] | None = None) -> str:
        """Store a memory directly; returns its id."""
        entity = {"user_id": user_id, "agent_id": agent_id}
        return self._state.store.add(text, entity, metadata or {}).id

    def memories(self) -> list[dict[str, Any]]:
        """Every stored memory, oldest first."""
        return [m.as_json() for m in self._state.store.select(None)]

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._state.lock:
            return list(self._state.requests)

    def requests_to(self, method: str, path: str) -> list[RecordedRequest]:
        return [r for r in self.requests if r.method == method and r.path == path]

    @property
    def hangups(self) -> int:
        """Hung requests the client gave up on."""
        return self._state.hangups

    @property
    def url(self) -> str:
        if self._server is None:
            raise RuntimeError("FakeMem0Server is not started; use `with FakeMem0Server() as s:`")
        return f"http://127.0.0.1:{self._server.server_address[1]}"

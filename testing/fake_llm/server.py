"""A scripted LLM server on 127.0.0.1 speaking the real wire formats, for tests.

    with FakeLLMServer() as server:
        server.script(reply_tool_call("read_file", {"path": "a.txt"}), reply_text("done"))
        client = openai.OpenAI(base_url=server.openai_base_url, api_key="x")
        ...
        assert server.requests[0].body["model"] == "gpt-test"

Endpoints: ``POST /v1/chat/completions`` (Chat Completions), ``POST /v1/messages``
(Anthropic Messages), ``POST /v1/responses`` (Responses), ``GET /v1/models``. Replies are
taken from one queue in order, whatever the endpoint, and rendered in that endpoint's
format (SSE when the request has ``"stream": true``). An exhausted script answers HTTP 418
with a message saying so. Every request is recorded (path, lower-cased headers, JSON body),
and the most answered at once is kept (``max_in_flight``).
HTTP/1.1 keep-alive, chunked SSE. Request handlers run on threads named ``fake-llm-handler``;
a handler pausing for ``delay`` or ``stall`` stops as soon as the client hangs up.
"""

from __future__ import annotations

import json
import select
import socket
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from ..local_server import LocalHTTPServer, ServedInBackground, send_json_head
from . import wire
from .replies import Reply, reply_error

STYLES = {"/v1/chat/completions": "chat", "/chat/completions": "chat",
          "/v1/messages": "anthropic", "/v1/responses": "responses", "/responses": "responses"}


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: Any = None
    events_sent: int = 0  # server-sent events written (streams)
    hung_up: bool = False  # the client closed the connection before the stream ended

    @property
    def style(self) -> str:
        return STYLES.get(self.path, "")


@dataclass
class _State:
    replies: deque[Reply] = field(default_factory=deque)
    requests: list[RecordedRequest] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    closing: threading.Event = field(default_factory=threading.Event)
    models: list[str] = field(default_factory=lambda: ["fake-model"])
    default: Reply | None = None
    hangups: int = 0
    in_flight: int = 0  # model requests being answered now
    max_in_flight: int = 0


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body are separate writes: no 40 ms stalls
    server: "_Server"

    def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
        pass

    def handle(self) -> None:
        threading.current_thread().name = "fake-llm-handler"
        super().handle()

    def _pause(self, seconds: float, until: threading.Event | None = None) -> bool:
        """Wait ``seconds``, and with ``until`` until it is set too; True (stop answering) if
        the server closes or the client hangs up meanwhile."""
        closing = self.server.state.closing
        deadline = time.monotonic() + seconds
        stop = False
        while not stop and ((left := deadline - time.monotonic()) > 0
                            or until is not None and not until.is_set()):
            stop = closing.is_set()
            readable, _, _ = select.select([self.connection], [], [], min(max(left, 0), 0.05)
                                           if until is None else 0.05)
            if readable and not stop:
                try:
                    stop = self.connection.recv(1, socket.MSG_PEEK) == b""
                except OSError:
                    stop = True
                if not stop:  # pipelined data, not a hang-up: just wait
                    stop = closing.wait(0.05)
        if stop and not closing.is_set():
            with self.server.state.lock:
                self.server.state.hangups += 1
        stop = stop or closing.is_set()
        if stop:
            self.close_connection = True
        return stop

    def _record(self, body: Any) -> RecordedRequest:
        state = self.server.state
        record = RecordedRequest(self.command, self.path,
                                 {k.lower(): v for k, v in self.headers.items()}, body)
        with state.lock:
            state.requests.append(record)
        return record

    def do_GET(self) -> None:  # noqa: N802
        self._record(None)
        if self.path.rstrip("/").endswith("/models"):
            data = {"object": "list", "data": [{"id": m, "object": "model", "owned_by": "fake"}
                                               for m in self.server.state.models]}
            self._json(200, data)
        else:
            self._json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            body = {"_raw": raw.decode("utf-8", "replace")}
        record = self._record(body)
        state = self.server.state
        with state.lock:
            state.in_flight += 1
            state.max_in_flight = max(state.max_in_flight, state.in_flight)
        try:
            self._answer(raw, body, record)
        finally:
            with state.lock:
                state.in_flight -= 1

    def _answer(self, raw: bytes, body: Any, record: RecordedRequest) -> None:
        style = STYLES.get(self.path.split("?")[0])
        if style is None:
            self._json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
            return
        reply = self.server.next_reply()
        if (reply.delay or reply.hold) and self._pause(reply.delay, reply.hold):
            return
        model = reply.model or body.get("model") or "fake-model"
        if reply.is_error:
            message = reply.error_message
            for name in ("authorization", "x-api-key"):
                message = message.replace("{%s}" % name, record.headers.get(name, ""))
            self._json(reply.status, wire.error_body(style, reply, message), reply.headers)
            return
        usage = reply.token_usage(len(raw))
        if body.get("stream"):
            if style == "chat":
                include = bool((body.get("stream_options") or {}).get("include_usage")) \
                    and reply.report_usage
                events = wire.chat_events(reply, model, usage, include)
            elif style == "anthropic":
                events = wire.anthropic_events(reply, model, usage)
            else:
                events = wire.responses_events(reply, model, usage)
            self._sse(events, reply, record)
            return
        render = {"chat": wire.chat_body, "anthropic": wire.anthropic_body,
                  "responses": wire.responses_body}[style]
        data = render(reply, model, usage)
        if style == "chat" and not reply.report_usage:
            data.pop("usage", None)
        self._json(200, data, reply.headers, cut=reply.cut_after is not None)

    def _json(self, status: int, data: Any, headers: dict[str, str] | None = None,
              cut: bool = False) -> None:
        payload = json.dumps(data).encode()
        send_json_head(self, status, len(payload), headers)
        if cut:  # half the promised body, then hang up
            self.wfile.write(payload[:len(payload) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        self.wfile.write(payload)

    def _sse(self, events: list[wire.Event], reply: Reply, record: RecordedRequest) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        for key, value in reply.headers.items():
            self.send_header(key, value)
        self.end_headers()
        try:
            for number, (name, data) in enumerate(events):
                if reply.cut_after is not None and number >= reply.cut_after:
                    self.wfile.flush()  # drop the connection without ending the stream
                    self.close_connection = True
                    return
                text = data if isinstance(data, str) else json.dumps(data)
                frame = (f"event: {name}\n" if name else "") + f"data: {text}\n\n"
                self._chunk(frame.encode())
                record.events_sent = number + 1
                if reply.stall and number == 1:
                    self.wfile.flush()
                    if self._pause(reply.stall):
                        record.hung_up = True
                        return
                if reply.pace:
                    self.wfile.flush()
                    if self._pause(reply.pace):
                        record.hung_up = True
                        return
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            record.hung_up = True
            self.close_connection = True

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")


class _Server(LocalHTTPServer):
    state: _State

    def __init__(self, state: _State, port: int = 0):
        super().__init__(_Handler, state, port)

    def next_reply(self) -> Reply:
        with self.state.lock:
            if self.state.replies:
                return self.state.replies.popleft()
        if self.state.default is not None:
            return self.state.default
        return reply_error(418, "fake LLM server: the script is exhausted; add replies with "
                                "server.script(...) or set server.default_reply")


class FakeLLMServer(ServedInBackground):
    """The scripted server. Use as a context manager, or call :meth:`start` / :meth:`close`.

    ``default_reply`` (optional) answers once the script is exhausted, for benchmarks;
    ``port`` (default 0: a free one) is the 127.0.0.1 port it listens on.
    """

    thread_name = "fake-llm-server"

    def __init__(self, *replies: Reply, default_reply: Reply | None = None, port: int = 0):
        self._state = _State(default=default_reply)
        self._state.replies.extend(replies)
        self._port = port

    def _build(self) -> _Server:
        return _Server(self._state, self._port)

    # --- scripting and inspection ---------------------------------------------------------
    def script(self, *replies: Reply) -> "FakeLLMServer":
        """Queue replies; each request takes the next one."""
        with self._state.lock:
            self._state.replies.extend(replies)
        return self

    @property
    def default_reply(self) -> Reply | None:
        return self._state.default

    @default_reply.setter
    def default_reply(self, reply: Reply | None) -> None:
        self._state.default = reply

    @property
    def models(self) -> list[str]:
        """Model ids listed by ``GET /v1/models``."""
        return self._state.models

    @property
    def hangups(self) -> int:
        """Replies abandoned because the client hung up during their ``delay`` or ``stall``."""
        return self._state.hangups

    @property
    def max_in_flight(self) -> int:
        """The most model requests (POSTs) being answered at the same time so far."""
        return self._state.max_in_flight

    @property
    def pending(self) -> int:
        """Replies not yet used."""
        return len(self._state.replies)

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received, oldest first (GET included)."""
        with self._state.lock:
            return list(self._state.requests)

    def posts(self) -> list[RecordedRequest]:
        """The model requests only (POSTs), oldest first."""
        return [r for r in self.requests if r.method == "POST"]

    @property
    def last(self) -> RecordedRequest:
        posts = self.posts()
        if not posts:
            raise AssertionError("the fake LLM server has received no model request")
        return posts[-1]

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("FakeLLMServer is not started; use `with FakeLLMServer() as s:`")
        return self._server.server_address[1]

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT`` (the Anthropic SDK's base_url)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1`` (the openai SDK's base_url)."""
        return f"{self.url}/v1"

    anthropic_base_url = url

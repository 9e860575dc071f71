"""Owner: the builtin plugin `gateway`.

Serving an ASGI app (Starlette) with uvicorn on the gateway's own event loop, for platform
plugins that receive HTTP (an API, a webhook). uvicorn is imported when a server starts, so
it is only needed by the platforms that serve.

The listening socket is made here: port 0 picks a free port (read back as ``port``), and
``TCP_NODELAY`` is set on it (accepted connections inherit it). Without it a client that keeps
its connection open waits about 40 ms per request: the response's body waits for the
acknowledgement of its headers, which the client delays.

:func:`read_body` reads a request's body up to a limit: a server must never read a body whole
before knowing its size (a client may declare a huge one, or stream one that never ends).

Slow and idle clients are cut off (:class:`ClientLimits`): a request's line and headers must
arrive within ``header_timeout`` of the connection (or of the previous response), its body
within ``body_timeout`` plus a second per ``body_min_rate`` bytes received, and at most
``max_connections`` are open at once (the next are answered 503). Without these, a client
sending a byte now and then (slowloris) holds a connection, and a file descriptor, forever."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

log = logging.getLogger("hermes_agent.gateway")


@dataclass(frozen=True)
class ClientLimits:
    """How long a client may take, and how many may be connected (see the module docstring)."""

    header_timeout: float = 20.0  # seconds for a request's line and headers
    body_timeout: float = 20.0  # seconds for its body, plus one per body_min_rate bytes
    body_min_rate: int = 500  # bytes per second a slow upload must keep up
    max_connections: int = 512  # open connections at once

    def __post_init__(self) -> None:
        if min(self.header_timeout, self.body_timeout, self.body_min_rate,
               self.max_connections) <= 0:
            raise ValueError(f"client limits must be positive: {self}")


def client_limits(config: Any, section: str) -> ClientLimits:
    """The :class:`ClientLimits` a platform's config.yaml section sets (``header_timeout``,
    ``body_timeout``, ``body_min_rate``, ``max_connections``; the defaults otherwise);
    ``ValueError`` naming ``section``'s key to fix."""
    from .platform_config import platform_setting

    values: dict[str, Any] = {}
    for name, kind in (("header_timeout", float), ("body_timeout", float),
                       ("body_min_rate", int), ("max_connections", int)):
        value = platform_setting(config or {}, {}, name)
        if value is None:
            continue
        try:
            values[name] = kind(value)
            if values[name] <= 0:
                raise ValueError
        except (TypeError, ValueError):
            raise ValueError(f"{section}.{name} must be a positive "
                             f"{'whole ' if kind is int else ''}number, not {value!r}") from None
    return ClientLimits(**values)


class AsgiServer:
    """``AsgiServer(app, host, port, name=..., port_hint=..., limits=ClientLimits(...))``;
    ``await start()`` is False (with the reason logged, ending with ``port_hint`` when the
    port is taken) when it cannot serve; ``await stop()`` lets requests in progress finish
    (10 s at most)."""

    def __init__(self, app: Any, host: str, port: int, *, name: str = "server",
                 port_hint: str = "choose a free port", backlog: int = 2048,
                 limits: ClientLimits | None = None, http: str = "auto"):
        self.app, self.host, self.port, self.name = app, host, port, name
        self.port_hint, self.backlog = port_hint, backlog
        self.limits = limits or ClientLimits()
        self.http = http  # uvicorn's HTTP parser: "auto" (httptools when installed) or "h11"
        self._server: Any = None
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> bool:
        import uvicorn

        try:
            sock = listening_socket(self.host, self.port, self.backlog)
        except OSError as exc:
            log.error("%s: cannot listen on %s:%s (%s); %s", self.name, self.host, self.port,
                      exc, self.port_hint)
            return False
        self.port = sock.getsockname()[1]
        ready = asyncio.Event()

        class Server(uvicorn.Server):
            @contextlib.contextmanager
            def capture_signals(self) -> Iterator[None]:  # the gateway owns the signals
                yield

            async def startup(self, sockets: list[socket.socket] | None = None) -> None:
                await super().startup(sockets)
                ready.set()

        config = uvicorn.Config(self.app, log_level="warning", lifespan="off", access_log=False,
                                http=guarded_protocol(self.http, self.limits, self.name),
                                ws="none")  # the platforms serve HTTP only: no upgrades
        self._server = Server(config)
        self._task = asyncio.get_running_loop().create_task(self._server.serve([sock]))
        waiter = asyncio.ensure_future(ready.wait())
        await asyncio.wait({waiter, self._task}, return_when=asyncio.FIRST_COMPLETED)
        if not ready.is_set():
            waiter.cancel()
            log.error("%s: uvicorn stopped while starting; see the log above", self.name)
            return False
        return True

    async def stop(self) -> None:
        if self._server is None or self._task is None:
            return
        self._server.should_exit = True
        try:
            await asyncio.wait_for(asyncio.shield(self._task), 10)
        except asyncio.TimeoutError:
            self._server.force_exit = True
            await self._task


class BodyRefused(Exception):
    """A request body :func:`read_body` did not return; answer ``status``."""

    status = 400


class BodyTooLarge(BodyRefused):
    """A request body above the server's limit: answer 413 (the rest is never read)."""

    status = 413

    def __init__(self, limit: int):
        super().__init__(f"the body is larger than {limit} bytes")
        self.limit = limit


class BodyIncomplete(BodyRefused):
    """The connection ended before the whole body arrived: the client went away, or sent it
    too slowly and was cut off (:class:`ClientLimits`). Nobody reads the answer."""

    status = 408

    def __init__(self) -> None:
        super().__init__("the connection closed before the whole body arrived")


async def read_body(request: Any, limit: int) -> bytes:
    """The body of a Starlette ``request``, read no further than ``limit`` bytes:
    :class:`BodyTooLarge` as soon as its declared ``Content-Length`` or the bytes received
    (a chunked body that never ends included) pass it; :class:`BodyIncomplete` when the
    connection ends first."""
    from starlette.requests import ClientDisconnect

    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise BodyTooLarge(limit)
    chunks, size = [], 0
    try:
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise BodyTooLarge(limit)
            chunks.append(chunk)
    except ClientDisconnect:
        raise BodyIncomplete() from None
    return b"".join(chunks)


def listening_socket(host: str, port: int, backlog: int = 2048) -> socket.socket:
    """A non-blocking TCP socket listening on ``host:port`` (IPv6 when ``host`` has a colon)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.bind((host, port))
        sock.listen(backlog)
        sock.setblocking(False)
    except OSError:
        sock.close()
        raise
    return sock


_TIMED_OUT = (b"HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 0\r\n\r\n")
_BUSY = (b"HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nRetry-After: 1\r\n"
         b"Content-Length: 0\r\n\r\n")


def guarded_protocol(http: str, limits: ClientLimits, name: str) -> type[asyncio.Protocol]:
    """uvicorn's HTTP protocol class (``"auto"``: httptools when installed, else h11) with
    :class:`ClientLimits` enforced on every connection."""
    if http == "h11":
        from uvicorn.protocols.http.h11_impl import H11Protocol as base
    elif http == "auto":
        from uvicorn.protocols.http.auto import AutoHTTPProtocol as base
    else:
        raise ValueError(f"unknown HTTP implementation {http!r}: use 'auto' or 'h11'")
    warned = [0.0]  # when the last "too many connections" warning was logged

    class Guarded(base):  # type: ignore[misc, valid-type]
        # uvicorn's protocols (httptools and h11 alike) keep the request being received or
        # answered in ``self.cycle`` and call ``on_response_complete`` after each response.
        _timer: asyncio.TimerHandle | None = None
        _body_started = 0.0
        _body_bytes = 0

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            if len(self.connections) > limits.max_connections:
                now = time.monotonic()
                if now - warned[0] > 60:
                    warned[0] = now
                    log.warning("%s: %d connections are open (the limit): refusing more with "
                                "503 until some close", name, limits.max_connections)
                self._cut(_BUSY)
                return
            self._wait_for_headers()

        def data_received(self, data: bytes) -> None:
            cycle = self.cycle
            receiving = cycle is not None and cycle.more_body and not cycle.response_complete
            super().data_received(data)
            if self.cycle is not cycle:  # a new request's headers are complete
                self._cancel()
                if self.cycle.more_body:
                    self._body_started, self._body_bytes = time.monotonic(), 0
                    self._arm(limits.body_timeout, self._body_late)
            elif receiving:
                self._body_bytes += len(data)
                if not self.cycle.more_body:  # the body is complete
                    self._cancel()

        def on_response_complete(self) -> None:
            super().on_response_complete()  # may start a pipelined request's cycle
            if not self.transport.is_closing() and self._idle():
                self._wait_for_headers()

        def connection_lost(self, exc: Exception | None) -> None:
            self._cancel()
            super().connection_lost(exc)

        def _idle(self) -> bool:
            """No request is being received or answered."""
            return (self.cycle is None or self.cycle.response_complete) and not getattr(
                self, "pipeline", None)

        def _wait_for_headers(self) -> None:
            self._arm(limits.header_timeout, self._headers_late)

        def _headers_late(self) -> None:
            if self._idle():
                self._cut(_TIMED_OUT)
            else:
                self._timer = None

        def _body_late(self) -> None:
            cycle, self._timer = self.cycle, None
            if cycle is None or not cycle.more_body or cycle.response_complete:
                return
            due = (self._body_started + limits.body_timeout
                   + self._body_bytes / limits.body_min_rate)
            left = due - time.monotonic()
            if left > 0:  # bytes kept coming: the deadline moved on
                self._arm(left, self._body_late)
            else:
                self._cut(b"" if cycle.response_started else _TIMED_OUT)

        def _arm(self, delay: float, callback: Any) -> None:
            self._cancel()
            self._timer = self.loop.call_later(delay, callback)

        def _cancel(self) -> None:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None

        def _cut(self, answer: bytes) -> None:
            self._timer = None
            if not self.transport.is_closing():
                if answer:
                    self.transport.write(answer)
                self.transport.close()

    Guarded.__name__ = Guarded.__qualname__ = f"Guarded{base.__name__}"
    return Guarded

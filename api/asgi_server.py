"""Serving an ASGI app (Starlette) with uvicorn on the gateway's own event loop, for platform
plugins that receive HTTP (an API, a webhook). uvicorn is imported when a server starts, so
it is only needed by the platforms that serve.

The listening socket is made here: port 0 picks a free port (read back as ``port``), and
``TCP_NODELAY`` is set on it (accepted connections inherit it). Without it a client that keeps
its connection open waits about 40 ms per request: the response's body waits for the
acknowledgement of its headers, which the client delays.

:func:`read_body` reads a request's body up to a limit: a server must never read a body whole
before knowing its size (a client may declare a huge one, or stream one that never ends)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections.abc import Iterator
from typing import Any

log = logging.getLogger("hermes_agent.gateway")


class AsgiServer:
    """``AsgiServer(app, host, port, name=..., port_hint=...)``; ``await start()`` is False
    (with the reason logged, ending with ``port_hint`` when the port is taken) when it cannot
    serve; ``await stop()`` lets requests in progress finish (10 s at most)."""

    def __init__(self, app: Any, host: str, port: int, *, name: str = "server",
                 port_hint: str = "choose a free port", backlog: int = 2048):
        self.app, self.host, self.port, self.name = app, host, port, name
        self.port_hint, self.backlog = port_hint, backlog
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

        config = uvicorn.Config(self.app, log_level="warning", lifespan="off", access_log=False)
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


class BodyTooLarge(Exception):
    """A request body above the server's limit: answer 413 (the rest is never read)."""

    def __init__(self, limit: int):
        super().__init__(f"the body is larger than {limit} bytes")
        self.limit = limit


async def read_body(request: Any, limit: int) -> bytes:
    """The body of a Starlette ``request``, read no further than ``limit`` bytes:
    :class:`BodyTooLarge` as soon as its declared ``Content-Length`` or the bytes received
    (a chunked body that never ends included) pass it."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise BodyTooLarge(limit)
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge(limit)
        chunks.append(chunk)
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

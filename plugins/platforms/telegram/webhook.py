"""Webhook mode's HTTP side: a Starlette app answering Telegram's POSTs on the configured
path, served by uvicorn as a task on the gateway's loop. A request whose
``X-Telegram-Bot-Api-Secret-Token`` header is not the secret (compared in constant time)
gets a 403 and goes no further."""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import logging
import socket
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

log = logging.getLogger("hermes_agent.gateway.telegram")
SECRET_HEADER = "x-telegram-bot-api-secret-token"
#: Handles one update Telegram posted; False when the gateway is stopping and did not take it.
OnUpdate = Callable[[dict[str, Any]], Awaitable[bool]]


def build_app(path: str, secret: str, on_update: OnUpdate) -> Starlette:
    expected = secret.encode()

    async def receive(request: Request) -> Response:
        given = request.headers.get(SECRET_HEADER, "").encode()
        if not hmac.compare_digest(given, expected):
            log.warning("telegram: refused a webhook request from %s without the right secret",
                        request.client.host if request.client else "?")
            return JSONResponse({"ok": False, "description": "Forbidden"}, status_code=403)
        try:
            update = await request.json()
        except ValueError:
            return JSONResponse({"ok": False, "description": "the body must be JSON"},
                                status_code=400)
        if isinstance(update, dict) and not await on_update(update):
            # not taken (the gateway is stopping): Telegram delivers it again later
            return JSONResponse({"ok": False, "description": "shutting down"}, status_code=503)
        return JSONResponse({"ok": True})

    return Starlette(routes=[Route(path, receive, methods=["POST"])])


class WebhookServer:
    """uvicorn serving ``app`` on ``host:port`` (0: a free port, read back as ``port``)."""

    def __init__(self, app: Starlette, host: str, port: int):
        self.app, self.host, self.port = app, host, port
        self._server: Any = None
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> bool:
        import uvicorn

        try:
            sock = _bind(self.host, self.port)
        except OSError as exc:
            log.error("telegram: cannot listen on %s:%s (%s); set platforms.telegram.port to a "
                      "free port", self.host, self.port, exc)
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
            log.error("telegram: the webhook server stopped while starting; see the log above")
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


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(128)
        sock.setblocking(False)
    except OSError:
        sock.close()
        raise
    return sock

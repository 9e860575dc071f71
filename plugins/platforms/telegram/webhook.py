"""Webhook mode's HTTP side: a Starlette app answering Telegram's POSTs on the configured
path, served by uvicorn as a task on the gateway's loop. A request whose
``X-Telegram-Bot-Api-Secret-Token`` header is not the secret (compared in constant time)
gets a 403 and goes no further."""

from __future__ import annotations

import hmac
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from hermes_agent.kits.asgi import BodyRefused, read_body

log = logging.getLogger("hermes_agent.gateway.telegram")
SECRET_HEADER = "x-telegram-bot-api-secret-token"
MAX_UPDATE_BYTES = 4_000_000  # an update is a few KB; Telegram sends files by reference
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
            update = json.loads(await read_body(request, MAX_UPDATE_BYTES))
        except BodyRefused as exc:
            return JSONResponse({"ok": False, "description": str(exc)}, status_code=exc.status)
        except ValueError:
            return JSONResponse({"ok": False, "description": "the body must be JSON"},
                                status_code=400)
        if isinstance(update, dict) and not await on_update(update):
            # not taken (the gateway is stopping): Telegram delivers it again later
            return JSONResponse({"ok": False, "description": "shutting down"}, status_code=503)
        return JSONResponse({"ok": True})

    return Starlette(routes=[Route(path, receive, methods=["POST"])])

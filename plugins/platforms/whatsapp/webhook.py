"""The Cloud API webhook's HTTP side (Starlette, served by uvicorn on the gateway's loop):

- ``GET <path>?hub.mode=subscribe&hub.verify_token=...&hub.challenge=...``: Meta's handshake;
  the challenge is echoed when the token matches (compared in constant time), else 403.
- ``POST <path>``: a notification, taken only when ``X-Hub-Signature-256`` is
  ``sha256=<hex>``, the HMAC-SHA256 of the raw body keyed with the app secret (401 otherwise,
  nothing reaches the gateway). The 200 comes once every message in it is in the gateway's
  durable inbox; a 503 makes Meta deliver it again later.
- ``GET /health``."""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from hermes_agent.kits.asgi import BodyRefused, read_body

log = logging.getLogger("hermes_agent.gateway.whatsapp_cloud")
SIGNATURE_HEADER = "x-hub-signature-256"
MAX_BODY_BYTES = 3_000_000  # a notification is a few KB; media comes by reference
#: Takes one notification; False when the gateway did not take all of it (send it again).
OnNotification = Callable[[dict[str, Any]], Awaitable[bool]]


def signature(app_secret: str, body: bytes) -> str:
    return "sha256=" + hmac.new(app_secret.encode(), body, hashlib.sha256).hexdigest()


def build_app(path: str, verify_token: str, app_secret: str,
              on_notification: OnNotification) -> Starlette:
    async def verify(request: Request) -> Response:
        query = request.query_params
        given = query.get("hub.verify_token", "").encode()
        if query.get("hub.mode") == "subscribe" and hmac.compare_digest(
                given, verify_token.encode()):
            return PlainTextResponse(query.get("hub.challenge", ""))
        log.warning("whatsapp_cloud: refused a webhook verification with a wrong verify token")
        return PlainTextResponse("Forbidden", status_code=403)

    async def receive(request: Request) -> Response:
        try:
            body = await read_body(request, MAX_BODY_BYTES)
        except BodyRefused as exc:
            return JSONResponse({"error": str(exc)}, status_code=exc.status)
        given = request.headers.get(SIGNATURE_HEADER, "").strip().lower()
        if not hmac.compare_digest(given.encode(), signature(app_secret, body).encode()):
            log.warning("whatsapp_cloud: refused a notification without a valid %s (is "
                        "WHATSAPP_CLOUD_APP_SECRET the app's secret?)", SIGNATURE_HEADER)
            return JSONResponse({"error": "invalid signature"}, status_code=401)
        try:
            notification = json.loads(body)
        except ValueError:
            return JSONResponse({"error": "the body must be JSON"}, status_code=400)
        if isinstance(notification, dict) and not await on_notification(notification):
            return JSONResponse({"error": "not taken; deliver again later"}, status_code=503,
                                headers={"Retry-After": "1"})
        return JSONResponse({"status": "ok"})

    async def health(request: Request) -> Response:
        return JSONResponse({"status": "ok", "platform": "whatsapp_cloud"})

    return Starlette(routes=[Route(path, verify, methods=["GET"]),
                             Route(path, receive, methods=["POST"]),
                             Route("/health", health, methods=["GET"])])

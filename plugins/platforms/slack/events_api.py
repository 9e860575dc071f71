"""The Events API over HTTP: a Starlette app answering Slack's POSTs on the configured path,
served by uvicorn on the gateway's loop. Every request must carry Slack's signature
(``X-Slack-Signature: v0=<HMAC-SHA256 of "v0:<timestamp>:<body>" with the signing secret>``)
and a timestamp (``X-Slack-Request-Timestamp``) within five minutes, checked by slack-sdk's
``SignatureVerifier`` in constant time; any other request gets a 401 and goes no further.
A captured request cannot be replayed later than that, and within it the event's id is
answered once (the adapter remembers them)."""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from slack_sdk.signature import SignatureVerifier
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from hermes_agent.kits.asgi import BodyRefused, read_body

log = logging.getLogger("hermes_agent.gateway.slack")
MAX_EVENT_BYTES = 1_000_000  # an event is a few KB; files come by reference
#: Handles one ``event_callback`` payload; False when it was not taken (Slack sends it again).
OnPayload = Callable[[dict[str, Any]], Awaitable[bool]]


def build_app(path: str, signing_secret: str, on_payload: OnPayload) -> Starlette:
    verifier = SignatureVerifier(signing_secret)

    async def receive(request: Request) -> Response:
        try:
            body = await read_body(request, MAX_EVENT_BYTES)
        except BodyRefused as exc:
            return PlainTextResponse(str(exc), status_code=exc.status)
        try:
            signed = verifier.is_valid_request(body, dict(request.headers))
        except (ValueError, UnicodeDecodeError):  # a timestamp that is no number, a bad body
            signed = False
        if not signed:
            log.warning("slack: refused an Events API request from %s: no valid signature "
                        "(or a timestamp more than 5 minutes off)",
                        request.client.host if request.client else "?")
            return PlainTextResponse("invalid signature", status_code=401)
        try:
            payload = json.loads(body)
        except ValueError:
            return PlainTextResponse("the body must be JSON", status_code=400)
        if not isinstance(payload, dict):
            return PlainTextResponse("the body must be a JSON object", status_code=400)
        if payload.get("type") == "url_verification":  # Slack checking the Request URL
            return JSONResponse({"challenge": str(payload.get("challenge", ""))})
        try:
            taken = payload.get("type") != "event_callback" or await on_payload(payload)
        except Exception:
            log.exception("slack: handling event %s failed; Slack sends it again",
                          payload.get("event_id"))
            taken = False
        if not taken:
            # not taken (the gateway is stopping, or the chat's queue is full): Slack retries
            return PlainTextResponse("not taken now; send it again", status_code=503)
        return Response(status_code=200)

    return Starlette(routes=[Route(path, receive, methods=["POST"])])

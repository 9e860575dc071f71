"""The Starlette app: ``POST <path>`` (default ``/webhook``) takes one signed message, and
``GET /health`` answers without a signature. A request reaches the gateway only once its
signature checks out (401 otherwise); a body that is not a JSON message gets a 400; an accepted
message a 202 with its id."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from hermes_agent.api import BodyIncomplete, BodyTooLarge, InboundMessage, read_body

from .settings import Settings
from .signing import SIGNATURE_HEADER, TIMESTAMP_HEADER, ReplayGuard, check

PLATFORM = "webhook"
REQUIRED = ("chat_id", "user_id", "text")
OPTIONAL = ("user_name", "thread_id", "message_id")


def error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def parse_message(data: Any) -> InboundMessage | str:
    """The message in a request's JSON, or what is wrong with it."""
    if not isinstance(data, Mapping):
        return "the body must be a JSON object with chat_id, user_id and text"
    fields: dict[str, str] = {}
    for name in REQUIRED + OPTIONAL:
        value = data.get(name)
        if value is None or value == "":
            if name in REQUIRED:
                return f"'{name}' is required (a non-empty string)"
            continue
        if isinstance(value, bool) or not isinstance(value, (str, int)):
            return f"'{name}' must be a string"
        fields[name] = str(value)
    return InboundMessage(PLATFORM, fields["chat_id"], fields["user_id"], fields["text"],
                          user_name=fields.get("user_name", ""),
                          thread_id=fields.get("thread_id"),
                          message_id=fields.get("message_id") or uuid.uuid4().hex, raw=dict(data))


def build_app(settings: Settings, receive: Callable[[InboundMessage], None]) -> Starlette:
    """``receive(message)`` hands an accepted message to the gateway (without waiting)."""
    replays = ReplayGuard(settings.timestamp_tolerance)

    async def inbound(request: Request) -> Response:
        try:  # read before the signature can be checked: never past the limit
            body = await read_body(request, settings.max_body_bytes)
        except BodyTooLarge as exc:
            return error(413, f"{exc} (platforms.webhook.max_body_bytes)")
        except BodyIncomplete as exc:  # the client is gone: nobody reads this
            return error(exc.status, str(exc))
        signature = request.headers.get(SIGNATURE_HEADER)
        timestamp = request.headers.get(TIMESTAMP_HEADER)
        problem = check(settings.secret, body, signature, timestamp,
                        tolerance=settings.timestamp_tolerance,
                        require_timestamp=settings.require_timestamp)
        if problem is not None:
            return error(401, problem)
        if timestamp is not None and signature and not replays.first_time(signature.strip()):
            return error(409, "this signed request was already received; sign a new one "
                         "(a fresh timestamp) to send the message again")
        try:
            data = json.loads(body)
        except ValueError as exc:  # UnicodeDecodeError included
            return error(400, f"the body must be JSON: {exc}")
        message = parse_message(data)
        if isinstance(message, str):
            return error(400, message)
        receive(message)
        return JSONResponse({"status": "accepted", "id": message.message_id}, status_code=202)

    async def health(request: Request) -> Response:
        return JSONResponse({"status": "ok", "platform": PLATFORM})

    return Starlette(routes=[Route(settings.path, inbound, methods=["POST"]),
                             Route("/health", health, methods=["GET"])])

"""The Starlette app: ``POST <path>`` (default ``/webhook``) takes one signed message, and
``GET /health`` answers without a signature. A request reaches the gateway only once its
signature checks out (401 otherwise); a body that is not a JSON message gets a 400. The 202
comes only once the gateway has the message in its durable inbox (a gateway killed right
after it still answers it); a chat with too many messages waiting gets a 429, a gateway
stopping a 503, an unknown user a 403: none of those was taken, so the sender may retry."""

from __future__ import annotations

import json
import uuid
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from hermes_agent.api import InboundMessage
from hermes_agent.kits.asgi import BodyIncomplete, BodyTooLarge, read_body

from .settings import Settings
from .signing import SIGNATURE_HEADER, TIMESTAMP_HEADER, ReplayGuard, check

PLATFORM = "webhook"
REQUIRED = ("chat_id", "user_id", "text")
OPTIONAL = ("user_name", "thread_id", "message_id")
#: What the sender hears for each outcome the gateway does not acknowledge.
NOT_TAKEN = {
    "busy": (429, "too many messages wait in this chat; send it again after Retry-After"),
    "closed": (503, "the gateway is stopping; send it again after Retry-After"),
    "refused": (403, "this user_id is not allowed; the owner adds it to "
                     "platforms.webhook.allowed_users"),
}


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


def build_app(settings: Settings,
              receive: Callable[[InboundMessage], Awaitable[str]]) -> Starlette:
    """``receive(message)`` hands a message to the gateway and returns what became of it
    (``queued`` once it is durable), without waiting for the replies."""
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
        outcome = await receive(message)
        if outcome in NOT_TAKEN:
            status, why = NOT_TAKEN[outcome]
            response = error(status, why)
            if status != 403:
                response.headers["Retry-After"] = "1"
            return response
        # queued (durable), or taken without a turn: a chat command, a question's answer
        return JSONResponse({"status": "accepted", "id": message.message_id}, status_code=202)

    async def health(request: Request) -> Response:
        return JSONResponse({"status": "ok", "platform": PLATFORM})

    return Starlette(routes=[Route(settings.path, inbound, methods=["POST"]),
                             Route("/health", health, methods=["GET"])])

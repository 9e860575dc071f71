"""The Starlette app: ``POST /v1/chat/completions``, ``GET /v1/models`` (both behind the
bearer key) and ``GET /health``. A request's chat (one agent session) is named by the
``X-Hermes-Session`` header, else the body's ``conversation``, else its ``user``; without
any, each request is a new one-turn chat."""

from __future__ import annotations

import hmac
import json
import uuid
from collections.abc import AsyncIterator
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from hermes_agent.kits.asgi import BodyIncomplete, BodyTooLarge, read_body

from . import openai_format as fmt
from .settings import ONESHOT, Settings, is_loopback

SESSION_HEADER = "x-hermes-session"


def authorized(request: Request, settings: Settings) -> bool:
    if settings.open:
        return local_program(request)
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(
        token.strip().encode(), settings.key.encode())


def local_program(request: Request) -> bool:
    """Whether a keyless request comes from a program on this machine rather than a web page
    in its browser: a page can POST to a loopback port without a preflight (a form, a
    ``text/plain`` fetch), and with DNS rebinding under its own host name. Browsers name the
    page in ``Origin`` and the host they think they reach in ``Host``."""
    if "origin" in request.headers:
        return False
    host = request.headers.get("host", "")
    name = host[1:host.find("]")] if host.startswith("[") else host.rpartition(":")[0] or host
    return not host or is_loopback(name)


def unauthorized(settings: Settings) -> JSONResponse:
    if settings.open:
        return JSONResponse(fmt.error(
            "Refused a request from a web browser (an Origin header, or a Host that is not "
            "loopback): without API_SERVER_KEY (allow_unauthenticated_loopback) only programs "
            "on this machine may call; set API_SERVER_KEY to serve others.",
            code="browser_request_refused"), status_code=403)
    return JSONResponse(fmt.error("Invalid or missing API key: send 'Authorization: Bearer "
                                  "<API_SERVER_KEY>'.", code="invalid_api_key"), status_code=401)


def build_app(settings: Settings, adapter: Any) -> ASGIApp:
    """The app answering through ``adapter`` (``ask`` and ``ask_stream``)."""
    model = settings.model_name

    async def health(request: Request) -> Response:
        return JSONResponse({"status": "ok", "platform": "api_server"})

    async def models(request: Request) -> Response:
        if not authorized(request, settings):
            return unauthorized(settings)
        return JSONResponse({"object": "list", "data": [
            {"id": model, "object": "model", "created": 0, "owned_by": "hermes"}]})

    async def completions(request: Request) -> Response:
        if not authorized(request, settings):
            return unauthorized(settings)
        try:
            body: Any = json.loads(await read_body(request, settings.max_body_bytes))
        except BodyTooLarge as exc:
            return JSONResponse(fmt.error(f"{exc}; raise platforms.api_server.max_body_bytes "
                                          "if it must be", code="body_too_large"),
                                status_code=413)
        except BodyIncomplete as exc:  # the client is gone: nobody reads this
            return JSONResponse(fmt.error(str(exc)), status_code=exc.status)
        except ValueError:
            return JSONResponse(fmt.error("The body must be JSON."), status_code=400)
        if not isinstance(body, dict):
            return JSONResponse(fmt.error("The body must be a JSON object."), status_code=400)
        text, images = fmt.last_user_text(body), fmt.last_user_images(body)
        if not text.strip() and not images:
            return JSONResponse(fmt.error("'messages' needs a user message with text or an "
                                          "image_url part."), status_code=400)
        user = str(body.get("user") or "")
        chat = (request.headers.get(SESSION_HEADER) or str(body.get("conversation") or "")
                or user or f"{ONESHOT}{uuid.uuid4().hex}")
        cid = fmt.completion_id()
        usage: dict[str, int] = {}
        if not body.get("stream"):
            answer = await adapter.ask(chat, user or "api", text, usage, images=images)
            return JSONResponse(fmt.completion(cid, model, answer, usage))
        options = body.get("stream_options")
        include_usage = isinstance(options, dict) and bool(options.get("include_usage"))

        async def events() -> AsyncIterator[str]:
            yield fmt.chunk(cid, model, {"role": "assistant", "content": ""})
            async for piece in adapter.ask_stream(chat, user or "api", text, usage,
                                                  images=images):
                yield fmt.chunk(cid, model, {"content": piece})
            yield fmt.chunk(cid, model, {}, finish="stop")
            if include_usage:
                yield fmt.usage_chunk(cid, model, usage)
            yield fmt.DONE

        return StreamingResponse(events(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache"})

    async def not_found(request: Request, exc: Exception) -> Response:
        return JSONResponse(fmt.error(
            f"No endpoint {request.url.path}: this server offers POST /v1/chat/completions, "
            "GET /v1/models and GET /health.", code="not_found"), status_code=404)

    async def wrong_method(request: Request, exc: Exception) -> Response:
        allowed = getattr(exc, "headers", None) or {}
        return JSONResponse(fmt.error(
            f"{request.method} is not allowed on {request.url.path}; use "
            f"{allowed.get('Allow', 'another method')}.", code="method_not_allowed"),
            status_code=405, headers=dict(allowed))

    routes = Starlette(routes=[
        Route("/health", health, methods=["GET"]),
        Route("/v1/models", models, methods=["GET"]),
        Route("/v1/chat/completions", completions, methods=["POST"]),
    ], exception_handlers={404: not_found, 405: wrong_method})

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        """Completions straight to their handler: the app's middleware and routing cost loop
        time on every turn (uvicorn answers 500 for an exception, as that middleware would)."""
        if (scope["type"] == "http" and scope["method"] == "POST"
                and scope["path"] == "/v1/chat/completions"):
            response = await completions(Request(scope, receive))
            await response(scope, receive, send)
        else:
            await routes(scope, receive, send)

    return app

"""The Starlette app: ``POST /v1/chat/completions``, ``GET /v1/models`` (both behind the
bearer key) and ``GET /health``. A request's chat (one agent session) is named by the
``X-Hermes-Session`` header, else the body's ``conversation``, else its ``user``; without
any, each request is a new one-turn chat."""

from __future__ import annotations

import hmac
import uuid
from collections.abc import AsyncIterator
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from . import openai_format as fmt
from .settings import Settings

SESSION_HEADER = "x-hermes-session"


def authorized(request: Request, settings: Settings) -> bool:
    if settings.open:
        return True
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(
        token.strip().encode(), settings.key.encode())


def unauthorized() -> JSONResponse:
    return JSONResponse(fmt.error("Invalid or missing API key: send 'Authorization: Bearer "
                                  "<API_SERVER_KEY>'.", code="invalid_api_key"), status_code=401)


def build_app(settings: Settings, adapter: Any) -> ASGIApp:
    """The app answering through ``adapter`` (``ask`` and ``ask_stream``)."""
    model = settings.model_name

    async def health(request: Request) -> Response:
        return JSONResponse({"status": "ok", "platform": "api_server"})

    async def models(request: Request) -> Response:
        if not authorized(request, settings):
            return unauthorized()
        return JSONResponse({"object": "list", "data": [
            {"id": model, "object": "model", "created": 0, "owned_by": "hermes"}]})

    async def completions(request: Request) -> Response:
        if not authorized(request, settings):
            return unauthorized()
        try:
            body: Any = await request.json()
        except ValueError:
            return JSONResponse(fmt.error("The body must be JSON."), status_code=400)
        if not isinstance(body, dict):
            return JSONResponse(fmt.error("The body must be a JSON object."), status_code=400)
        text = fmt.last_user_text(body)
        if not text.strip():
            return JSONResponse(fmt.error("'messages' needs a user message with text."),
                                status_code=400)
        user = str(body.get("user") or "")
        chat = (request.headers.get(SESSION_HEADER) or str(body.get("conversation") or "")
                or user or f"oneshot-{uuid.uuid4().hex}")
        cid = fmt.completion_id()
        if not body.get("stream"):
            return JSONResponse(fmt.completion(cid, model, await adapter.ask(
                chat, user or "api", text)))

        async def events() -> AsyncIterator[str]:
            yield fmt.chunk(cid, model, {"role": "assistant", "content": ""})
            async for piece in adapter.ask_stream(chat, user or "api", text):
                yield fmt.chunk(cid, model, {"content": piece})
            yield fmt.chunk(cid, model, {}, finish="stop")
            yield fmt.DONE

        return StreamingResponse(events(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache"})

    routes = Starlette(routes=[
        Route("/health", health, methods=["GET"]),
        Route("/v1/models", models, methods=["GET"]),
        Route("/v1/chat/completions", completions, methods=["POST"]),
    ])

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

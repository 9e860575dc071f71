"""The api-server's adapter: serves the Starlette app with uvicorn as a task on the gateway's
loop, turns each completion request into an ``InboundMessage`` and answers it with the reply
the gateway ``send``s back (matched by ``reply_to``, the request's message id)."""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
import uuid
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from hermes_agent.api import InboundMessage, PlatformAdapter, ReplyStream, SendResult
from hermes_agent.kits.platform_config import http_url

from .settings import ONESHOT, Settings

log = logging.getLogger("hermes_agent.gateway.api_server")
PLATFORM = "api_server"
REFUSED = ("Sorry, this request's user is not allowed to use this agent; add it to "
           "platforms.api_server.allowed_users.")
SHUTTING_DOWN = "The gateway is shutting down; send the message again once it is back."


@dataclass
class _Pending:
    chat_id: str
    future: asyncio.Future[str]
    deltas: asyncio.Queue[str | None] | None = None  # a streamed request's text; None ends it
    streamed: list[str] = field(default_factory=list)
    usage: dict[str, int] | None = None  # the turn's token counts, with its reply

    def answer(self, text: str) -> None:
        if not self.future.done():
            self.future.set_result(text)
        if self.deltas is not None:
            self.deltas.put_nowait(None)


class _StreamedReply(ReplyStream):
    """The model's text as it comes, for a request that asked for ``stream: true``."""

    def __init__(self, adapter: "ApiServerAdapter", message_id: str, pending: _Pending):
        self.adapter, self.message_id, self.pending = adapter, message_id, pending

    async def push(self, text: str) -> None:
        assert self.pending.deltas is not None
        self.pending.streamed.append(text)
        self.pending.deltas.put_nowait(text)

    async def finish(self, text: str) -> list[str] | None:
        self.adapter._pending.pop(self.message_id, None)
        self.pending.usage = self.usage
        self.pending.answer(text)
        return []


class ApiServerAdapter(PlatformAdapter):
    name = PLATFORM
    durable_inbox = False  # the HTTP client sees a failed request and sends it again
    reports_usage = True  # a completion's ``usage`` is the turn's

    def __init__(self, config: Any, settings: Settings):
        super().__init__(config)
        self.settings = settings
        self.port = settings.port  # the bound port once connected (port 0 picks a free one)
        self._pending: dict[str, _Pending] = {}  # message id -> the request waiting for it
        # message ids: unique in this process without a getrandom() call (it releases the
        # GIL, and the loop waits to take it back while turn threads run) per request
        self._id_prefix, self._ids = uuid.uuid4().hex[:16], itertools.count(1)
        self._dispatching: dict[asyncio.Task[Any], str] = {}  # request task -> its message id
        self._server: Any = None
        self._closing = False
        self._timeout = float((config or {}).get("request_timeout", 600))

    # --- lifecycle ---------------------------------------------------------------------------
    async def connect(self, *, is_reconnect: bool = False) -> bool:
        from hermes_agent.kits.asgi import AsgiServer

        from .app import build_app

        self._server = AsgiServer(build_app(self.settings, self), self.settings.host,
                                  self.settings.port, name="api_server",
                                  port_hint="set platforms.api_server.port or API_SERVER_PORT "
                                            "to a free port", limits=self.settings.limits)
        if not await self._server.start():
            return False
        self.port = self._server.port
        self.listen_url = http_url(self.settings.host, self.port)
        log.info("api_server: listening on http://%s:%s%s", self.settings.host, self.port,
                 " (no key: loopback only)" if self.settings.open else "")
        return True

    async def disconnect(self) -> None:
        self._closing = True
        for pending in list(self._pending.values()):
            pending.answer(SHUTTING_DOWN)
        if self._server is not None:
            await self._server.stop()

    # --- requests ----------------------------------------------------------------------------
    async def ask(self, chat_id: str, user_id: str, text: str,
                  usage: dict[str, int] | None = None,
                  images: list[dict[str, Any]] | None = None) -> str:
        """Hand ``text`` (and ``images``, ``image_url`` parts) to the gateway as a message of
        ``chat_id`` and wait for the reply; ``usage`` (when given) is filled with the turn's
        token counts."""
        submitted = await self._submit(chat_id, user_id, text, stream=False, images=images)
        if isinstance(submitted, str):
            return submitted
        message_id, pending = submitted
        try:  # asyncio.timeout: no extra future and callbacks per request (wait_for has them)
            async with asyncio.timeout(self._timeout):
                answer = await pending.future
            if usage is not None and pending.usage:
                usage.update(pending.usage)
            return answer
        except TimeoutError:
            return self._too_slow()
        finally:
            self._pending.pop(message_id, None)

    async def ask_stream(self, chat_id: str, user_id: str, text: str,
                         usage: dict[str, int] | None = None,
                         images: list[dict[str, Any]] | None = None) -> AsyncIterator[str]:
        """Like :meth:`ask`, yielding the reply's text as the model writes it."""
        submitted = await self._submit(chat_id, user_id, text, stream=True, images=images)
        if isinstance(submitted, str):
            yield submitted
            return
        message_id, pending = submitted
        assert pending.deltas is not None
        deadline = time.monotonic() + self._timeout
        try:
            while True:
                try:
                    piece = await asyncio.wait_for(pending.deltas.get(),
                                                   max(0.0, deadline - time.monotonic()))
                except asyncio.TimeoutError:
                    yield self._too_slow()
                    return
                if piece is None:
                    break
                yield piece
            final, streamed = pending.future.result(), "".join(pending.streamed)
            if usage is not None and pending.usage:
                usage.update(pending.usage)
            if not streamed:
                yield final
            elif final.startswith(streamed) and final != streamed:
                yield final[len(streamed):]
        finally:
            self._pending.pop(message_id, None)

    async def _submit(self, chat_id: str, user_id: str, text: str, stream: bool,
                      images: list[dict[str, Any]] | None = None) -> tuple[str, _Pending] | str:
        """Dispatch the message; its id and pending reply, or the answer when there is
        nothing to wait for."""
        if self._closing:
            return SHUTTING_DOWN
        message_id = f"{self._id_prefix}{next(self._ids):x}"
        pending = _Pending(chat_id, asyncio.get_running_loop().create_future(),
                           asyncio.Queue() if stream else None)
        self._pending[message_id] = pending
        task = asyncio.current_task()
        if task is not None:  # replies sent while dispatching (a refusal, /status) are ours
            self._dispatching[task] = message_id
        try:
            outcome = await self.handle_message(InboundMessage(
                PLATFORM, chat_id, user_id, text, message_id=message_id, raw={"text": text},
                images=list(images or ())))
        finally:
            if task is not None:
                self._dispatching.pop(task, None)
        if outcome in ("skipped", "closed", "refused") and not pending.future.done():
            self._pending.pop(message_id, None)  # no reply will come: answer now
            return {"closed": SHUTTING_DOWN, "refused": REFUSED}.get(outcome, "")
        return message_id, pending

    def keeps_chat(self, chat_id: str) -> bool:
        return not chat_id.startswith(ONESHOT)  # nobody can name a one-turn chat again

    def _too_slow(self) -> str:
        return (f"No answer within {self._timeout:.0f}s; raise platforms.api_server."
                "request_timeout if turns take longer.")

    def open_stream(self, chat_id: str, reply_to: str | None = None,
                    metadata: Mapping[str, Any] | None = None) -> ReplyStream | None:  # type: ignore[override]
        pending = self._pending.get(reply_to or "")
        if pending is None or pending.deltas is None:
            return None
        return _StreamedReply(self, reply_to or "", pending)

    def _waiting(self, chat_id: str, reply_to: str | None) -> str | None:
        """Which request a reply answers: the one it replies to, else the one being dispatched
        in this task, else the chat's oldest waiting request (a command's answer)."""
        if reply_to in self._pending:
            return reply_to
        task = asyncio.current_task()
        if task is not None and task in self._dispatching:
            return self._dispatching[task]
        return next((mid for mid, p in self._pending.items()
                     if p.chat_id == chat_id and not p.future.done()), None)

    async def send(self, chat_id: str, content: str, reply_to: str | None = None,
                   metadata: Mapping[str, Any] | None = None) -> SendResult:  # type: ignore[override]
        message_id = self._waiting(chat_id, reply_to)
        pending = self._pending.pop(message_id, None) if message_id else None
        if pending is None or pending.future.done():
            return SendResult(False, error=f"no request waits for an answer in chat {chat_id}")
        if isinstance((metadata or {}).get("usage"), Mapping):
            pending.usage = dict(metadata["usage"])  # type: ignore[index]
        pending.answer(content)
        return SendResult(True, message_id=message_id)

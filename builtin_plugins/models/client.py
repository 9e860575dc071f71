"""``ModelClient``: what the agent loop calls. It wraps the resolved provider's transport with
the reliability layer: our own retries (SDK retries are off) with jittered backoff that
honours ``Retry-After``, classified errors, ``fallback_providers`` for the rest of the turn,
interruption from another thread, the ``pre_api_request`` / ``post_api_request`` /
``api_request_error`` hooks, and usage with an estimated cost. A caller's
``CallContext.middleware`` (the agent's ``llm_request`` / ``llm_execution`` middleware)
rewrites each attempt's arguments before ``pre_api_request`` and wraps its call.

    client = ModelClient.from_config(kernel)
    response = client.chat(ChatRequest(messages, tools), on_event=print_delta,
                           interrupt=token, context=CallContext(session_id=sid, turn_id=tid))
"""

from __future__ import annotations

import json
import logging
import threading
import time
import uuid
from typing import TYPE_CHECKING, Any

from hermes_agent.api import (
    CallContext, ChatRequest, ChatResponse, EventCallback, PartialStreamError, ProviderError,
    RequestInterrupted, RetryNotice, StreamEvent,
)
from hermes_agent.kits.secrets import mask_url
from hermes_agent.kits.text import plural

from .classify import brief, classify
from .interrupt import CallGuard
from .pricing import estimate_cost
from .repetition import RepetitionGuard
from .resolve import resolve_fallbacks, resolve_provider, runtime_for_entry
from .retry import RetryPolicy
from .runtime import RuntimeProvider, Transport
from .usage import estimate_usage

if TYPE_CHECKING:
    from hermes_agent import Kernel

log = logging.getLogger("hermes_agent.models")
_SECRET_KEYS = ("api_key", "authorization", "x-api-key", "extra_headers")


class ModelClient:
    """Calls one resolved provider, falling back along ``fallback_providers`` when it fails.

    A fallback, once taken, stays active until :meth:`new_turn` restores the primary.
    """

    def __init__(self, runtime: RuntimeProvider, *, kernel: Kernel | None = None,
                 fallbacks: list[dict[str, Any]] | None = None, retry: RetryPolicy | None = None):
        self.kernel = kernel
        self.primary = runtime
        self.active = runtime
        self.fallbacks = list(fallbacks or [])
        self._fallback_index = 0
        self.retry = retry or RetryPolicy()

    @classmethod
    def from_config(cls, kernel: Kernel, *, provider: str | None = None,
                    model: str | None = None, base_url: str | None = None,
                    api_key: str | None = None, retry: RetryPolicy | None = None) -> "ModelClient":
        """Resolve the provider (explicit arguments win over config.yaml, then the environment)
        and read ``fallback_providers``, ``model.max_retries`` and ``model.retry_delay``."""
        runtime = resolve_provider(kernel, provider=provider, model=model, base_url=base_url,
                                   api_key=api_key)
        if retry is None:
            retry = RetryPolicy.from_config(kernel.config)
        return cls(runtime, kernel=kernel, fallbacks=resolve_fallbacks(kernel), retry=retry)

    def fork(self) -> "ModelClient":
        """A new client on the provider in use now, with the same fallbacks and retry policy
        (a subagent's: it continues where its parent is, without sharing its turn state)."""
        return ModelClient(self.active, kernel=self.kernel, fallbacks=self.fallbacks,
                           retry=self.retry)

    # --- turn scope --------------------------------------------------------------------
    def new_turn(self) -> None:
        """Go back to the primary provider (fallback lasts for the rest of a turn only)."""
        self.active = self.primary
        self._fallback_index = 0

    def _next_fallback(self) -> RuntimeProvider | None:
        while self._fallback_index < len(self.fallbacks):
            entry = self.fallbacks[self._fallback_index]
            self._fallback_index += 1
            try:
                candidate = runtime_for_entry(self.kernel, entry)
            except ProviderError as exc:
                log.warning("fallback provider %s skipped: %s", entry.get("provider"), exc)
                continue
            if (candidate.name, candidate.model) == (self.active.name, self.active.model):
                continue
            return candidate
        return None

    # --- the call ----------------------------------------------------------------------
    def chat(self, request: ChatRequest, *, on_event: EventCallback | None = None,
             interrupt: threading.Event | None = None,
             context: CallContext | None = None) -> ChatResponse:
        """Make one model call (retrying and falling back as configured)."""
        context = context or CallContext()
        while True:
            runtime = self.active
            try:
                return self._call(runtime, request, on_event, interrupt, context)
            except ProviderError as exc:
                if not exc.should_fallback:
                    raise
                following = self._next_fallback()
                if following is None:
                    raise
                log.warning("%s failed (%s); falling back to %s (%s) for the rest of the turn",
                            runtime.name, exc.reason, following.name, following.model)
                self.active = following

    def _call(self, runtime: RuntimeProvider, request: ChatRequest, on_event: EventCallback | None,
              interrupt: threading.Event | None, context: CallContext) -> ChatResponse:
        transport = runtime.transport()
        kwargs = transport.build_kwargs(request)
        model = kwargs.get("model") or runtime.model
        hooks = getattr(self.kernel, "hooks", None) if self.kernel is not None else None
        request_id = uuid.uuid4().hex
        max_retries = self.retry.max_retries
        for attempt in range(max_retries + 1):
            if interrupt is not None and interrupt.is_set():
                raise RequestInterrupted(runtime.name, model)
            started = time.time()
            sent, trace, info = kwargs, context.middleware_trace, {}
            if context.middleware is not None:  # llm_request middleware
                info = self._base(runtime, model, context, request_id)
                sent, trace = context.middleware.rewrite(kwargs, info)
            if hooks is not None and hooks.has_hook("pre_api_request"):
                hooks.call("pre_api_request", **self._pre_payload(
                    runtime, model, request, sent, context, request_id, started, trace))
            shown = _Shown(on_event) if on_event is not None else None

            def send(final: dict[str, Any], shown: _Shown | None = shown) -> ChatResponse:
                return self._send(transport, final, shown, interrupt, runtime, model)

            try:  # through llm_execution middleware, if any
                response = send(sent) if context.middleware is None \
                    else context.middleware.execute(sent, send, info, kwargs)
            except _Repeating as raw:
                if shown is None or raw is not shown.stopped:
                    raise
                response = _cut_short(shown, runtime, model)
                log.warning("%s (%s): the reply repeated itself; stream closed after %d "
                            "characters", runtime.name, model, shown.guard.total)
            except Exception as raw:
                if shown is not None and raw is shown.callback_error:
                    raise  # the caller's own callback failed: not a provider error
                error = classify(raw, provider=runtime.name, model=model,
                                 key_env=runtime.profile.key_env, base_url=runtime.base_url,
                                 secrets=(runtime.api_key,))
                if shown is not None and shown.count and not isinstance(error, RequestInterrupted):
                    # part of this answer reached the callback: a retry would repeat it
                    error = PartialStreamError(error, shown.text(), shown.reasoning(), shown.count)
                retry = error.retryable and attempt < max_retries
                if hooks is not None and hooks.has_hook("api_request_error"):
                    hooks.call("api_request_error", **self._error_payload(
                        runtime, model, sent, context, request_id, started, error, attempt,
                        max_retries, retry))
                if not retry:
                    if error.retryable and attempt:
                        error.args = (f"{error.args[0]} (gave up after {plural(attempt + 1, 'attempt')})",)
                    raise error from raw
                delay = self.retry.delay(attempt + 1, error.retry_after)
                notice = RetryNotice(runtime.name, model, error.reason, brief(error),
                                     attempt + 2, max_retries + 1, delay)
                if context.on_retry is not None:
                    context.on_retry(notice)
                else:  # nobody shows it: a wait over a second still says why in the log
                    log.log(logging.WARNING if delay > 1 else logging.INFO, "%s", notice.text())
                if interrupt is not None:
                    if interrupt.wait(delay):
                        raise RequestInterrupted(runtime.name, model) from None
                else:
                    time.sleep(delay)
                continue
            response.attempts = attempt + 1
            response.provider = runtime.name
            if response.usage.empty:  # the server reported none (llama.cpp's streams)
                response.usage = estimate_usage(
                    sent, response, shown.text() if shown is not None and shown.stopped else None)
            response.cost = estimate_cost(runtime.profile, response.model or model, response.usage)
            if hooks is not None and hooks.has_hook("post_api_request"):
                hooks.call("post_api_request", **self._post_payload(
                    runtime, model, sent, context, request_id, started, response))
            return response
        raise AssertionError("unreachable")  # the loop returns or raises

    @staticmethod
    def _send(transport: Transport, kwargs: dict[str, Any], emit: EventCallback | None,
              interrupt: threading.Event | None, runtime: RuntimeProvider,
              model: str) -> ChatResponse:
        """Run the call on this thread. With ``interrupt``, a :class:`CallGuard` lets the token
        shut the call's connection down from another thread (see :mod:`.interrupt`)."""
        if interrupt is None:
            return transport.send(kwargs, emit, _ignore)
        try:
            with CallGuard(interrupt) as guard:
                return transport.send(kwargs, emit, guard.add_closer)
        except Exception:
            if interrupt.is_set():
                raise RequestInterrupted(runtime.name, model) from None
            raise

    # --- hook payloads (built only when someone listens) ---------------------------------
    @staticmethod
    def _base(runtime: RuntimeProvider, model: str, context: CallContext, request_id: str) -> dict[str, Any]:
        return {"task_id": context.task_id, "turn_id": context.turn_id,
                "api_request_id": request_id, "session_id": context.session_id,
                "platform": context.platform, "model": model, "provider": runtime.name,
                "base_url": mask_url(runtime.base_url) or None, "api_mode": runtime.api_mode,
                "api_call_count": context.api_call_count}

    def _pre_payload(self, runtime: RuntimeProvider, model: str, request: ChatRequest,
                     kwargs: dict[str, Any], context: CallContext, request_id: str,
                     started: float, trace: list[dict[str, Any]]) -> dict[str, Any]:
        safe = sanitize(kwargs)
        chars = len(json.dumps(safe, default=str))
        return {**self._base(runtime, model, context, request_id),
                "user_message": context.user_message,
                "conversation_history": context.conversation_history,
                "request_messages": request.messages, "message_count": len(request.messages),
                "tool_count": len(request.tools or ()), "approx_input_tokens": chars // 4,
                "request_char_count": chars, "max_tokens": _cap(runtime, request),
                "started_at": started, "middleware_trace": trace,
                "request": safe}

    def _post_payload(self, runtime: RuntimeProvider, model: str, kwargs: dict[str, Any],
                      context: CallContext, request_id: str, started: float,
                      response: ChatResponse) -> dict[str, Any]:
        ended = time.time()
        usage = {**response.usage.to_dict(), "cost": response.cost.to_dict() if response.cost else None}
        return {**self._base(runtime, model, context, request_id),
                "api_duration": ended - started, "started_at": started, "ended_at": ended,
                "finish_reason": response.finish_reason,
                "message_count": len(kwargs.get("messages") or kwargs.get("input") or ()),
                "response_model": response.model or None, "response": response.to_dict(),
                "usage": usage, "assistant_message": response.assistant_message(),
                "assistant_content_chars": len(response.content),
                "assistant_tool_call_count": len(response.tool_calls)}

    def _error_payload(self, runtime: RuntimeProvider, model: str, kwargs: dict[str, Any],
                       context: CallContext, request_id: str, started: float,
                       error: ProviderError, attempt: int, max_retries: int,
                       retryable: bool) -> dict[str, Any]:
        ended = time.time()
        cause = error.__cause__ or error
        return {**self._base(runtime, model, context, request_id),
                "api_duration": ended - started, "started_at": started, "ended_at": ended,
                "status_code": error.status_code, "retry_count": attempt,
                "max_retries": max_retries, "retryable": retryable, "reason": error.reason,
                "error": {"type": type(cause).__name__, "message": str(error)},
                "request": sanitize(kwargs)}


def sanitize(kwargs: dict[str, Any]) -> dict[str, Any]:
    """The SDK arguments without secrets or non-JSON values (for hooks and logs)."""
    return {k: v for k, v in kwargs.items() if k.lower() not in _SECRET_KEYS and k != "timeout"}


def _cap(runtime: RuntimeProvider, request: ChatRequest) -> int | None:
    """The output cap the call sends (a custom transport may not have the helper)."""
    cap = getattr(runtime.transport(), "max_tokens_for", None)
    return cap(request) if cap is not None else request.max_tokens


def _cut_short(shown: _Shown, runtime: RuntimeProvider, model: str) -> ChatResponse:
    """The reply of a stream closed because it repeated itself: its text up to the repeats."""
    kept = shown.guard.kept or ""
    return ChatResponse(content=kept, finish_reason="repetition",
                        reasoning=shown.reasoning() or None,
                        model=model, provider=runtime.name, api_mode=runtime.api_mode,
                        repeated=shown.guard.total - len(kept))


def _ignore(_closer: Any) -> None:
    return None


class _Repeating(Exception):
    """Raised into the transport's stream loop to close a reply that repeats itself."""


class _Shown:
    """The caller's ``on_event`` callback, counting what reached it during one attempt and
    watching the text for a loop (:mod:`.repetition`): then it raises :class:`_Repeating`,
    which closes the stream (and so the server's generation) in every transport."""

    __slots__ = ("on_event", "count", "pieces", "callback_error", "guard", "stopped")

    def __init__(self, on_event: EventCallback):
        self.on_event = on_event
        self.count = 0
        self.pieces: list[StreamEvent] = []
        self.callback_error: BaseException | None = None
        self.guard = RepetitionGuard()
        self.stopped: _Repeating | None = None

    def __call__(self, event: StreamEvent) -> None:
        self.count += 1
        if event.kind != "tool_call":
            self.pieces.append(event)
        try:
            self.on_event(event)
        except BaseException as exc:
            self.callback_error = exc
            raise
        if event.kind == "text" and self.guard.feed(event.text):
            self.stopped = _Repeating()
            raise self.stopped

    def text(self) -> str:
        return "".join(e.text for e in self.pieces if e.kind == "text")

    def reasoning(self) -> str:
        return "".join(e.text for e in self.pieces if e.kind == "reasoning")

"""The model contracts: the normalised request, response, usage and stream types, the
provider profile a model-provider plugin registers, and what a caller of a model sees.

Messages use the OpenAI chat format everywhere (``{"role", "content", "tool_calls",
"tool_call_id"}``); each transport converts to and from its wire format. These are plain
dataclasses so a call costs microseconds, not a validation pass.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

log = logging.getLogger("hermes_agent.models")
API_MODES = ("chat_completions", "anthropic_messages", "codex_responses")


@dataclass(frozen=True)
class ProviderProfile:
    """What hermes knows about one provider. A model-provider plugin registers one with
    ``ctx.register_model_provider(profile)``; ``model.provider`` selects it by ``name``.

    ``key_env`` lists the variables that may hold the API key, in priority order;
    ``base_url_env`` names a variable that overrides ``base_url``. ``local`` servers need no
    key and are probed on their default port when nothing is configured. A provider whose
    wire protocol is none of :data:`API_MODES` passes ``transport``: a callable taking the
    resolved provider (its ``name``, ``model``, ``base_url``, ``api_key``, ``profile``) and
    returning an object with ``build_kwargs(request)`` and ``send(kwargs, emit, on_open)``
    (docs/model-providers.md).
    """

    name: str
    api_mode: str = "chat_completions"
    base_url: str = ""
    key_env: tuple[str, ...] = ()
    default_model: str = ""
    auxiliary_model: str = ""
    label: str = ""
    base_url_env: str = ""
    aliases: tuple[str, ...] = ()
    key_required: bool = True
    local: bool = False
    auto_detect: bool = True  # may be chosen automatically when its key is set
    models: tuple[str, ...] = ()
    key_url: str = ""
    default_headers: Mapping[str, str] = field(default_factory=dict)
    extra_body: Mapping[str, Any] = field(default_factory=dict)
    max_tokens_param: str = "max_tokens"  # OpenAI's newer models: "max_completion_tokens"
    # the output cap sent when neither the call nor ``model.max_tokens`` sets one (None: none)
    default_max_tokens: int | None = None
    # its models see images (content parts are sent as images; otherwise described in text);
    # ``model.supports_vision`` in config.yaml overrides it for the model in use
    supports_vision: bool = False
    transport: Callable[[Any], Any] | None = None
    # what the provider publishes per model id (only what is known): the context window in
    # tokens, and prices in US dollars per million tokens (input, output, cache read, cache
    # write; None: not published). The built-in tables apply to models not listed here.
    context_lengths: Mapping[str, int] = field(default_factory=dict)
    prices: Mapping[str, tuple[float | None, float | None, float | None, float | None]] = field(
        default_factory=dict)

    def __post_init__(self) -> None:
        if not self.name or not isinstance(self.name, str):
            raise ValueError("ProviderProfile needs a non-empty name")
        if self.transport is None and self.api_mode not in API_MODES:
            raise ValueError(f"provider {self.name!r}: api_mode {self.api_mode!r} is not one of "
                             f"{', '.join(API_MODES)} (or pass transport= for a custom protocol)")
        for attr in ("key_env", "aliases", "models"):
            value = getattr(self, attr)
            if isinstance(value, str):
                object.__setattr__(self, attr, (value,))
            elif not isinstance(value, tuple):
                object.__setattr__(self, attr, tuple(value))

    @property
    def title(self) -> str:
        return self.label or self.name


@dataclass(slots=True)
class ToolCall:
    """One function call the model asked for. ``arguments`` is the JSON text as sent."""

    id: str
    name: str
    arguments: str = "{}"

    @property
    def args(self) -> dict[str, Any]:
        """The parsed arguments; ``{}`` when they are not a JSON object."""
        try:
            value = json.loads(self.arguments or "{}")
        except ValueError:
            return {}
        return value if isinstance(value, dict) else {}

    def to_message(self) -> dict[str, Any]:
        return {"id": self.id, "type": "function",
                "function": {"name": self.name, "arguments": self.arguments}}


@dataclass(slots=True)
class Usage:
    """Token counts of one call. ``input_tokens`` excludes cached input: the prompt size is
    ``input_tokens + cache_read_tokens + cache_write_tokens``. ``estimated``: the server
    reported no usage, so the counts were estimated from the text (shown with ``~``)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0
    estimated: bool = False

    @property
    def prompt_tokens(self) -> int:
        return self.input_tokens + self.cache_read_tokens + self.cache_write_tokens

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.output_tokens

    def __add__(self, other: "Usage") -> "Usage":
        return Usage(self.input_tokens + other.input_tokens,
                     self.output_tokens + other.output_tokens,
                     self.cache_read_tokens + other.cache_read_tokens,
                     self.cache_write_tokens + other.cache_write_tokens,
                     self.reasoning_tokens + other.reasoning_tokens,
                     self.estimated or other.estimated)

    @property
    def empty(self) -> bool:
        """No count at all (what a server that reports no usage leaves)."""
        return not (self.total_tokens or self.reasoning_tokens)

    def to_dict(self) -> dict[str, Any]:
        return {"input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
                "cache_read_tokens": self.cache_read_tokens,
                "cache_write_tokens": self.cache_write_tokens,
                "reasoning_tokens": self.reasoning_tokens,
                "prompt_tokens": self.prompt_tokens, "total_tokens": self.total_tokens,
                "estimated": self.estimated}


@dataclass(frozen=True, slots=True)
class Cost:
    """Estimated cost of a call. ``amount_usd`` is ``None`` when a price is unknown (never 0).
    ``status``: ``estimated`` | ``unknown`` | ``included`` (local or subscription)."""

    amount_usd: float | None
    status: str
    source: str = ""
    pricing_version: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"amount_usd": self.amount_usd, "status": self.status, "source": self.source,
                "pricing_version": self.pricing_version}


@dataclass(slots=True)
class ChatRequest:
    """One model call. ``model`` empty: the resolved provider's model. ``stream`` asks the
    transport to stream (deltas go to the ``on_event`` callback). ``cache_ttl`` (``"5m"`` or
    ``"1h"``) applies to prompt caching where the provider supports it."""

    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None = None
    model: str = ""
    max_tokens: int | None = None
    temperature: float | None = None
    reasoning_effort: str | None = None
    extra_body: dict[str, Any] | None = None
    stream: bool = True
    timeout: float | None = None
    tool_choice: Any = None
    cache_ttl: str = "5m"


@dataclass(slots=True)
class ChatResponse:
    """The normalised result of a call, whatever the wire protocol.

    ``reasoning_details`` carries provider reasoning that must be sent back on later turns
    (signed Anthropic thinking blocks, Responses reasoning items); :meth:`assistant_message`
    puts it on the message so the next request replays it.

    ``finish_reason`` is ``stop``, ``tool_calls``, ``length`` (the output cap was reached),
    ``content_filter`` or ``repetition``: the reply kept repeating one block, so hermes closed
    the stream; ``content`` ends before the repeats and ``repeated`` says how many characters
    were dropped.
    """

    content: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    finish_reason: str = "stop"
    reasoning: str | None = None
    reasoning_details: list[dict[str, Any]] | None = None
    usage: Usage = field(default_factory=Usage)
    model: str = ""
    provider: str = ""
    api_mode: str = ""
    id: str = ""
    cost: Cost | None = None
    attempts: int = 1
    repeated: int = 0

    def assistant_message(self) -> dict[str, Any]:
        """The OpenAI-format assistant message to append to the conversation."""
        message: dict[str, Any] = {"role": "assistant", "content": self.content or None}
        if self.tool_calls:
            message["tool_calls"] = [call.to_message() for call in self.tool_calls]
        if self.reasoning:
            message["reasoning"] = self.reasoning
        if self.reasoning_details:
            message["reasoning_details"] = self.reasoning_details
        return message

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "model": self.model, "provider": self.provider,
                "api_mode": self.api_mode, "content": self.content,
                "tool_calls": [c.to_message() for c in self.tool_calls],
                "finish_reason": self.finish_reason, "reasoning": self.reasoning,
                "usage": self.usage.to_dict(), "cost": self.cost.to_dict() if self.cost else None}


@dataclass(frozen=True, slots=True)
class StreamEvent:
    """A streamed delta. ``kind``: ``text`` / ``reasoning`` (``text`` holds the delta) or
    ``tool_call`` (``index``, and ``tool_call_id``/``name`` on the first delta of a call,
    ``text`` holds the next piece of the JSON arguments).

    Deltas are never repeated: once one has reached the callback, a failure of that stream
    raises :class:`PartialStreamError` instead of retrying."""

    kind: str
    text: str = ""
    index: int = 0
    tool_call_id: str | None = None
    name: str | None = None


EventCallback = Callable[[StreamEvent], None]


class CancelToken(threading.Event):
    """An event that interrupts a model call from another thread: ``token.set()`` shuts the
    call's HTTP connection down at once (while waiting for the response as well as during a
    stream, or during a retry's backoff) and the call raises :class:`RequestInterrupted` on
    its own thread. A plain :class:`threading.Event` works too (it is polled every 50 ms)."""

    def __init__(self) -> None:
        super().__init__()
        self._callbacks: list[Callable[[], None]] = []
        self._lock = threading.Lock()

    def on_cancel(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Run ``callback`` when the token is set (now, if it already is). Returns a remover."""
        with self._lock:
            fired = self.is_set()
            if not fired:
                self._callbacks.append(callback)
        if fired:
            callback()

        def remove() -> None:
            with self._lock:
                if callback in self._callbacks:
                    self._callbacks.remove(callback)
        return remove

    def set(self) -> None:
        with self._lock:
            super().set()
            callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            try:
                callback()
            except Exception as exc:  # one broken callback must not stop the others
                log.warning("interrupt callback %r raised %s: %s", callback,
                            type(exc).__name__, exc)


@dataclass(frozen=True)
class RetryNotice:
    """A failed attempt that will be retried after ``delay`` seconds: what the surface shows
    while the user waits. ``attempt`` is the number of the next attempt, of ``attempts``."""

    provider: str
    model: str
    reason: str
    summary: str  # e.g. "connection refused"
    attempt: int
    attempts: int
    delay: float

    def text(self) -> str:
        """E.g. ``openrouter: retrying in 4 s (attempt 2/3: timed out)``."""
        seconds = f"{self.delay:.1f}".rstrip("0").rstrip(".")
        return (f"{self.provider}: retrying in {seconds} s (attempt {self.attempt}/"
                f"{self.attempts}: {self.summary})")


class ModelCallMiddleware(Protocol):
    """What a caller may hand the model client (``CallContext.middleware``) to rewrite and
    wrap each attempt: the agent's ``llm_request`` / ``llm_execution`` middleware. ``info``
    holds the attempt's ids, as the API hooks report them."""

    def rewrite(self, request: dict[str, Any], info: dict[str, Any]
                ) -> tuple[dict[str, Any], list[dict[str, str]]]: ...

    def execute(self, request: dict[str, Any], send: Callable[[dict[str, Any]], Any],
                info: dict[str, Any], original: dict[str, Any] | None = None) -> Any: ...


@dataclass
class CallContext:
    """Who is calling: the ids and turn data the API hooks report."""

    session_id: str | None = None
    task_id: str | None = None
    turn_id: str | None = None
    platform: str = "cli"
    user_message: str = ""
    conversation_history: list[dict[str, Any]] = field(default_factory=list)
    api_call_count: int = 1
    middleware_trace: list[dict[str, Any]] = field(default_factory=list)
    task: str = ""  # auxiliary task name, if any
    # told before each backoff wait, so a surface can show progress instead of silence
    on_retry: Callable[[RetryNotice], None] | None = None
    # rewrites and wraps each attempt (the agent's llm_* middleware); None: sent as built
    middleware: ModelCallMiddleware | None = None


@runtime_checkable
class ModelClient(Protocol):
    """A model client bound to one resolved provider, with retries and fallback: what
    ``kernel.service(MODELS).client(...)`` returns and what the agent loop calls.
    ``active`` is the provider in use (``name``, ``model``, ``base_url``)."""

    active: Any

    def chat(self, request: ChatRequest, *, on_event: EventCallback | None = None,
             interrupt: threading.Event | None = None,
             context: CallContext | None = None) -> ChatResponse: ...

    def new_turn(self) -> None: ...

    def fork(self) -> "ModelClient": ...

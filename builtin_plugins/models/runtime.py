"""A resolved provider (profile + model + endpoint + key) and the transport base class.

A transport speaks one wire protocol through its official SDK, with the SDK's own retries
off (``max_retries=0``): retries, backoff and fallback belong to :mod:`.client`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hermes_agent.api import ChatRequest, ChatResponse, EventCallback, ProviderProfile
from hermes_agent.kits.secrets import mask_url

DEFAULT_TIMEOUT = 600.0
# transport class per api_mode, imported on first use (the anthropic SDK is slow to import)
TRANSPORTS = {
    "chat_completions": "hermes_agent.builtin_plugins.models.chat_completions:ChatCompletionsTransport",
    "anthropic_messages": "hermes_agent.builtin_plugins.models.anthropic_messages:AnthropicTransport",
    "codex_responses": "hermes_agent.builtin_plugins.models.codex_responses:ResponsesTransport",
}
PLACEHOLDER_KEY = "no-key-needed"  # local servers ignore the key but the SDKs require one


@dataclass
class RuntimeProvider:
    """Everything needed to call one provider. ``source`` says where the choice came from:
    ``explicit``, ``config``, ``env``, ``local`` (a local server answered) or ``fallback``."""

    profile: ProviderProfile
    model: str
    base_url: str
    api_key: str = ""
    source: str = "config"
    timeout: float = DEFAULT_TIMEOUT
    extra_body: dict[str, Any] = field(default_factory=dict)
    # the output cap of a call that sets none: ``model.max_tokens``, else the profile's
    # ``default_max_tokens`` (None: send none, the server's own limit applies)
    max_tokens: int | None = None
    _transport: Any = field(default=None, repr=False, compare=False)

    @property
    def name(self) -> str:
        return self.profile.name

    @property
    def api_mode(self) -> str:
        return self.profile.api_mode

    def transport(self) -> "Transport":
        """The transport for this provider (built once, reusing its HTTP connection pool)."""
        if self._transport is None:
            if self.profile.transport is not None:
                self._transport = self.profile.transport(self)
            else:
                import importlib

                module, _, attr = TRANSPORTS[self.api_mode].partition(":")
                self._transport = getattr(importlib.import_module(module), attr)(self)
        return self._transport

    def describe(self) -> dict[str, Any]:
        """What to show about this provider: the key only as set / not set, the base_url with
        its credentials masked."""
        return {"provider": self.name, "model": self.model, "base_url": mask_url(self.base_url),
                "api_mode": self.api_mode, "source": self.source,
                "api_key": "set" if self.api_key else "not set"}


class Transport:
    """Base of the API-mode transports. Subclasses implement :meth:`build_kwargs` (the SDK
    arguments, without secrets) and :meth:`send` (perform the call on the calling thread and
    stream deltas to ``emit``). The built-in transports' HTTP clients are interruptible by
    themselves (:mod:`.interrupt`); a transport doing its own I/O hands ``on_open`` a
    callable that aborts it, which an interrupt then runs from another thread."""

    api_mode = ""

    def __init__(self, runtime: RuntimeProvider):
        self.runtime = runtime
        self._client: Any = None

    @property
    def client(self) -> Any:
        if self._client is None:
            self._client = self.make_client()
        return self._client

    def make_client(self) -> Any:
        raise NotImplementedError

    def build_kwargs(self, request: ChatRequest) -> dict[str, Any]:
        raise NotImplementedError

    def send(self, kwargs: dict[str, Any], emit: EventCallback | None,
             on_open: Callable[[Callable[[], None]], None]) -> ChatResponse:
        raise NotImplementedError

    # --- helpers shared by the transports ----------------------------------------------
    def merged_extra_body(self, request: ChatRequest) -> dict[str, Any]:
        extra: dict[str, Any] = {}
        for part in (self.runtime.profile.extra_body, self.runtime.extra_body, request.extra_body):
            if part:
                extra.update(part)
        return extra

    def max_tokens_for(self, request: ChatRequest) -> int | None:
        """The call's output cap: the request's, else the provider's (see RuntimeProvider)."""
        return request.max_tokens if request.max_tokens is not None else self.runtime.max_tokens

    def timeout_for(self, request: ChatRequest) -> float:
        return request.timeout or self.runtime.timeout or DEFAULT_TIMEOUT


def sent_as_json(kwargs: dict[str, Any], bulk: tuple[str, ...]) -> dict[str, Any]:
    """SDK arguments with the ``bulk`` values (the history, the tool schemas) passed through
    ``extra_body``, which the SDK puts into the request body as they are.

    The SDKs walk every message and tool of a ``create()`` call against their TypedDicts
    before sending, at about 1 ms per 10 messages: late in a long session most of a turn went
    there. Our values are plain JSON already. Each moved key keeps an empty placeholder in
    the SDK arguments, which the SDK's merge replaces in place, so the body is the same JSON,
    key order included. Keys the caller set in ``extra_body`` still win."""
    moved = {k: kwargs[k] for k in bulk if k in kwargs}
    if not moved:
        return kwargs
    sdk = {**kwargs, **dict.fromkeys(moved, ())}
    sdk["extra_body"] = {**moved, **(kwargs.get("extra_body") or {})}
    return sdk


def openai_client(runtime: RuntimeProvider) -> Any:
    """An ``openai.OpenAI`` client for ``runtime`` with SDK retries off and interruptible
    connections (see :mod:`.interrupt`)."""
    import openai

    from .nettrack import tracked_http_client

    return openai.OpenAI(api_key=runtime.api_key or PLACEHOLDER_KEY,
                         base_url=runtime.base_url or None, max_retries=0,
                         timeout=runtime.timeout or DEFAULT_TIMEOUT,
                         default_headers=dict(runtime.profile.default_headers) or None,
                         http_client=tracked_http_client(openai.DefaultHttpxClient))


def tool_schemas(tools: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    """Tools in the OpenAI ``{"type": "function", "function": {...}}`` shape (bare schemas
    are wrapped)."""
    out = []
    for tool in tools or ():
        if tool.get("type") == "function" and "function" in tool:
            out.append(tool)
        else:
            out.append({"type": "function", "function": tool})
    return out


def attr(obj: Any, name: str, default: Any = None) -> Any:
    """``obj.name`` for SDK models and dicts alike (also the SDK's extra fields)."""
    if obj is None:
        return default
    if isinstance(obj, dict):
        return obj.get(name, default)
    value = getattr(obj, name, None)
    if value is None:
        extra = getattr(obj, "model_extra", None)
        if extra:
            value = extra.get(name)
    return default if value is None else value

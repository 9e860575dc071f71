"""Errors of model calls: one class, a ``reason``, and a message that says how to fix it.

The model-provider machinery raises them (classifying SDK and network failures); the agent
loop, surfaces and plugins catch them.
"""

from __future__ import annotations

from hermes_agent import HermesError

# reason -> retried with backoff?
RETRYABLE = {"rate_limit": True, "server_error": True, "overloaded": True, "network": True,
             "timeout": True, "auth": False, "billing": False, "context_overflow": False,
             "model_not_found": False, "bad_request": False, "interrupted": False,
             "unknown": True}
# reasons after which the next fallback provider is tried (the rest fail the call)
FALLBACK_REASONS = frozenset({"rate_limit", "server_error", "overloaded", "network", "timeout",
                              "auth", "billing", "model_not_found", "unknown"})

class ProviderError(HermesError):
    """A model call failed. ``reason`` is one of ``auth``, ``rate_limit``, ``billing``,
    ``context_overflow``, ``server_error``, ``overloaded``, ``network``, ``timeout``,
    ``model_not_found``, ``bad_request``, ``interrupted`` or ``unknown``."""

    def __init__(self, message: str, *, reason: str = "unknown", status_code: int | None = None,
                 retry_after: float | None = None, provider: str = "", model: str = "",
                 retryable: bool | None = None):
        super().__init__(message)
        self.reason = reason
        self.status_code = status_code
        self.retry_after = retry_after
        self.provider = provider
        self.model = model
        self.retryable = RETRYABLE.get(reason, False) if retryable is None else retryable

    @property
    def should_fallback(self) -> bool:
        return self.reason in FALLBACK_REASONS


class RequestInterrupted(ProviderError):
    """The call was interrupted from another thread (its ``CancelToken`` was set)."""

    def __init__(self, provider: str = "", model: str = ""):
        super().__init__("the model call was interrupted", reason="interrupted",
                         provider=provider, model=model)


class PartialStreamError(ProviderError):
    """A stream failed after part of the answer had reached the ``on_event`` callback.

    It is neither retried nor sent to a fallback provider: the caller has already shown that
    text, and a new attempt would stream a different answer after it. ``partial_text`` and
    ``partial_reasoning`` hold what was streamed (``events``: how many deltas); ``reason`` is
    the failure's own (``network``, ``timeout``, ``server_error``, ...)."""

    def __init__(self, error: ProviderError, partial_text: str, partial_reasoning: str,
                 events: int):
        head, _, fix = str(error).partition(" Fix: ")
        shown = f"{len(partial_text)} characters" if partial_text else f"{events} deltas"
        super().__init__(f"{head} The stream broke after {shown} of the answer had been shown, "
                         f"so it was not retried. Fix: ask again for a complete answer"
                         f"{'; if it keeps happening: ' + fix if fix else ''}",
                         reason=error.reason, status_code=error.status_code,
                         provider=error.provider, model=error.model, retryable=False)
        self.partial_text = partial_text
        self.partial_reasoning = partial_reasoning
        self.events = events
        self.__cause__ = error.__cause__

    @property
    def should_fallback(self) -> bool:
        return False


class NoProviderError(ProviderError):
    """Nothing is configured and no local server answers."""

    def __init__(self, message: str):
        super().__init__(message, reason="auth", retryable=False)

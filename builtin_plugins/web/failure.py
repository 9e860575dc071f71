"""What the web tools report when they cannot answer: a kind the model can act on and a
message that states the fix."""

from __future__ import annotations

from typing import Any

from hermes_agent.api import WebError, tool_error

#: kinds beyond WebError's: nothing selected, a name nothing provides, a plugin not loaded,
#: a backend whose library is not installed, a backend that raised something other than
#: WebError, a call the user interrupted
SELECTION_KINDS = ("not_configured", "unknown_backend", "not_loaded", "missing_dependency",
                   "backend_error", "interrupted")


class Failure(Exception):
    def __init__(self, message: str, kind: str, *, backend: str = "",
                 retry_after: float | None = None, tried: list[dict[str, Any]] | None = None):
        super().__init__(message)
        self.message, self.kind, self.backend = message, kind, backend
        self.retry_after = retry_after
        self.tried = tried or []  # earlier backends of web.fallback that failed

    @classmethod
    def from_web_error(cls, exc: WebError, backend: str) -> "Failure":
        return cls(str(exc), exc.kind, backend=backend, retry_after=exc.retry_after)

    def note(self) -> dict[str, Any]:
        return {"backend": self.backend, "kind": self.kind, "error": self.message}

    def result(self) -> str:
        """The JSON error result of the tool."""
        extra: dict[str, Any] = {"kind": self.kind}
        if self.backend:
            extra["backend"] = self.backend
        if self.retry_after is not None:
            extra["retry_after"] = self.retry_after
        if self.tried:
            extra["tried"] = self.tried
        return tool_error(self.message, error_type=f"web_{self.kind}", **extra)

"""The tool contract the kernel's registry and the plugins share: the mark of a handler that
takes the call's context, the mark of one whose calls may run side by side, and the error
result every handler (and the registry itself) returns, and the result whose untrusted source
its handler learnt only while it ran. A leaf: standard library only."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["PARALLEL_SAFE_MARK", "PROVENANCE_MARK", "TAKES_CONTEXT", "ErrorResult", "SourcedResult",
           "tool_error"]

TAKES_CONTEXT = "takes_tool_context"  # set by hermes_agent.api.with_context
PARALLEL_SAFE_MARK = "tool_parallel_safe"  # set by hermes_agent.api.parallel_safe
PROVENANCE_MARK = "tool_untrusted_source"  # set by hermes_agent.api.untrusted_output


class ErrorResult(str):
    """The JSON text :func:`tool_error` returns, carrying its message and error type, so a
    caller knows the call failed without parsing the text again."""

    message: str
    error_type: str

    def __new__(cls, text: str, message: str, error_type: str) -> "ErrorResult":
        self = super().__new__(cls, text)
        self.message, self.error_type = message, error_type
        return self


class SourcedResult(str):
    """A result the agent treats as untrusted data from ``untrusted_source`` (fenced, the turn
    tainted), as it treats a handler marked ``untrusted_output``: for a handler that knows the
    source only once it ran (the file it read lies in a project the user has not trusted, a
    subagent read a web page)."""

    untrusted_source: str

    def __new__(cls, text: str, source: str) -> "SourcedResult":
        self = super().__new__(cls, text)
        self.untrusted_source = source
        return self


def tool_error(message: object, **extra: Any) -> str:
    """A tool's JSON error result ``{"error": message, **extra}`` (error type
    ``extra["error_type"]``, else ``tool_error``)."""
    text = str(message)
    return ErrorResult(json.dumps({"error": text, **extra}, ensure_ascii=False), text,
                       str(extra.get("error_type") or "tool_error"))

"""``hermes_agent.api``: the contracts that plugins share.

What two plugins both need lives here, never in one of them: the model request and response
types, the tool-call context, the slot providers' base classes and protocols, the hook
payload types, and the few helpers every plugin author wants (tool results, masking secrets,
private files). Names load lazily (PEP 562), so importing this package costs nothing until a
name is used. docs/architecture.md says what may import what.
"""

from __future__ import annotations

import importlib
from typing import Any

# name -> module of this package that defines it
_EXPORTS: dict[str, str] = {
    **dict.fromkeys(("ToolCallContext", "ApprovalRequest", "APPROVAL_CHOICES", "ApprovalCallback", "ClarifyCallback", "with_context", "tool_result", "tool_error", "tool_status"), "tools"),  # noqa: E501
    **dict.fromkeys(("set_interrupted", "is_interrupted"), "interrupt"),
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'hermes_agent.api' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__

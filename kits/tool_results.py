"""Owner: the builtin plugin `agent`. Reading what the tool contract marks: a handler's
result status (a :func:`~hermes_agent.api.tool_error` result is known by its marker, without
parsing its JSON) and whether a handler may run beside other read-only calls. Not part of
the contract docs/api.md locks (docs/kits.md)."""

from __future__ import annotations

import json
from typing import Any

from hermes_agent.hookspecs.tool_contract import PARALLEL_SAFE_MARK, PROVENANCE_MARK, ErrorResult


def is_error_result(result: Any) -> bool:
    """Whether ``result`` is a :func:`~hermes_agent.api.tool_error` result (by its marker)."""
    return isinstance(result, ErrorResult)


def is_parallel_safe(handler: Any) -> bool:
    """Whether ``handler`` was marked with :func:`~hermes_agent.api.parallel_safe`."""
    return bool(getattr(handler, PARALLEL_SAFE_MARK, False))


def untrusted_source(handler: Any, args: dict[str, Any], context: Any = None) -> str | None:
    """The source a call's result comes from when ``handler`` was marked with
    :func:`~hermes_agent.api.untrusted_output` (None: trusted); a source function of two
    parameters also gets the call's ``context``. A source function that raises makes the
    result untrusted, named after the handler: unknown means untrusted."""
    source = getattr(handler, PROVENANCE_MARK, None)
    if source is None or isinstance(source, str):
        return source
    try:
        value = source(args, context) if _takes_two(source) else source(args)
    except Exception:
        return f"tool:{getattr(handler, '__name__', '?')}"
    return str(value) if value else None


def _takes_two(fn: Any) -> bool:
    code = getattr(fn, "__code__", None)
    if code is not None:
        return bool(code.co_argcount - (1 if hasattr(fn, "__self__") else 0) >= 2)
    import inspect

    try:
        return len(inspect.signature(fn).parameters) >= 2
    except (TypeError, ValueError):
        return False


def tool_status(result: str) -> tuple[str, str | None, str | None]:
    """``(status, error_type, error_message)`` of a handler's result: ``"error"`` for a
    :func:`tool_error` result (read from its marker) or a JSON object with a non-empty
    ``error`` key (parsed only when the text starts like one), else ``"ok"``."""
    if isinstance(result, ErrorResult):
        if result.message:
            return "error", result.error_type, result.message[:500]
        return "ok", None, None
    if result.startswith("{") and '"error"' in result[:200]:
        try:
            data = json.loads(result)
        except ValueError:
            return "ok", None, None
        if isinstance(data, dict) and data.get("error"):
            return "error", str(data.get("error_type") or "tool_error"), str(data["error"])[:500]
    return "ok", None, None

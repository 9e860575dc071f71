"""How the results of one hook call are combined, for each rule in ``DISPATCH``.

These functions read what the specs' return contracts promise (see :mod:`.payloads`); a
result that does not fit is ignored, never an error. The hook bus applies them:
``first`` rules stop at the first accepted result, ``all`` rules combine every result.
The specs of ``first`` rules are pluggy ``firstresult`` specs, so a plain
``pm.hook.<name>(...)`` stops early too (at the first result that is not ``None``;
the bus also skips results its rule does not accept).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def tool_directive(results: list[Any]) -> dict[str, Any] | None:
    """The first valid pre_tool_call directive: a block with a message, or an approve request."""
    for result in results:
        if not isinstance(result, dict):
            continue
        action = result.get("action")
        message = result.get("message")
        if action == "block" and isinstance(message, str) and message:
            return {"action": "block", "message": message}
        if action == "approve":
            return {k: v for k, v in result.items() if k in ("action", "message", "rule_key")}
    return None


def join_context(results: list[Any]) -> str:
    """pre_llm_call results (strings or ``{"context": str}``) joined with blank lines."""
    parts = []
    for result in results:
        text = result.get("context") if isinstance(result, dict) else result
        if isinstance(text, str) and text.strip():
            parts.append(text)
    return "\n\n".join(parts)


def is_gateway_directive(result: Any) -> bool:
    return isinstance(result, dict) and result.get("action") in ("skip", "rewrite", "allow")


def is_verify_directive(result: Any) -> bool:
    if not isinstance(result, dict):
        return False
    if result.get("action") == "continue":
        return bool(result.get("message"))
    return result.get("decision") == "block" and bool(result.get("reason"))


def _first_verify(results: list[Any]) -> Any:
    return next((r for r in results if is_verify_directive(r)), None)


def gather(results: list[Any]) -> list[Any]:
    """doctor_checks results joined in call order: each list or tuple contributes its
    items, any other value counts as one item (the caller checks their type)."""
    joined: list[Any] = []
    for result in results:
        joined.extend(result if isinstance(result, (list, tuple)) else [result])
    return joined


#: rule -> ("first", accept(result)) or ("all", combine(results)); ``None``: the list itself.
COMBINE: dict[str, tuple[str, Callable[[Any], Any] | None]] = {
    "broadcast": ("all", None),
    "collector": ("all", None),
    "gather": ("all", gather),
    "veto": ("all", tool_directive),
    "context": ("all", join_context),
    "verify_directive": ("all", _first_verify),
    "first_str": ("first", lambda r: isinstance(r, str)),
    "first_nonempty_str": ("first", lambda r: isinstance(r, str) and bool(r)),
    "gateway_directive": ("first", is_gateway_directive),
    "first_result": ("first", lambda r: r is not None),
}

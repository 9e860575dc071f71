"""The clarify tool: ask the user through the surface's ``clarify_callback``."""

from __future__ import annotations

import json
import logging
from typing import Any

from hermes_agent.api import ToolCallContext, tool_error

from .schemas import CLARIFY_MAX_CHOICES

log = logging.getLogger("hermes_agent.clarify")


def _choice_text(choice: Any) -> str:
    if isinstance(choice, dict):  # models sometimes send {"label": ...} objects
        for key in ("label", "text", "value", "description"):
            if isinstance(choice.get(key), str):
                return choice[key].strip()
        return ""
    return str(choice).strip() if choice is not None else ""


def clarify(args: dict[str, Any], ctx: ToolCallContext) -> str:
    question = args.get("question")
    if not isinstance(question, str) or not question.strip():
        return tool_error("clarify needs a 'question'.")
    question = question.strip()
    raw = args.get("choices")
    choices: list[str] | None = None
    if raw is not None:
        if not isinstance(raw, list):
            return tool_error("choices must be a list of strings.")
        choices = [c for c in (_choice_text(x) for x in raw) if c][:CLARIFY_MAX_CHOICES] or None
    if ctx.clarify_callback is None:
        return tool_error("Nobody can answer questions here (non-interactive run). Continue "
                            "with your best judgement and state the assumption you made.")
    try:
        answer = ctx.clarify_callback(question, choices)
    except Exception as exc:
        log.warning("clarify callback raised %s: %s", type(exc).__name__, exc)
        return tool_error(f"Could not ask the user ({type(exc).__name__}: {exc}). Continue "
                            "with your best judgement and state your assumption.")
    if answer is None or not str(answer).strip():
        return json.dumps({"question": question, "choices_offered": choices, "user_response": "",
                           "note": "The user gave no answer; proceed with your best judgement."},
                          ensure_ascii=False)
    return json.dumps({"question": question, "choices_offered": choices,
                       "user_response": str(answer).strip()}, ensure_ascii=False)

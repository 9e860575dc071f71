"""The loop's call into system-prompt assembly (``prompt.py`` of this plugin).

The prompt is built once per session and frozen; this module only adapts the call. When the
prompt builder is not installed, a minimal prompt is used: the identity from
``$HERMES_HOME/SOUL.md`` (or a built-in one), the date, the session and the platform hint.
"""

from __future__ import annotations

import datetime as _dt
import inspect
from pathlib import Path
from typing import Any

DEFAULT_IDENTITY = (
    "You are Hermes, a capable AI assistant. You help with questions, code, analysis, "
    "writing and with actions carried out through your tools. Be direct and accurate, say "
    "when you are unsure, and prefer useful answers over long ones.")
PLATFORM_HINTS = {
    "cli": "You are running in a terminal. Prefer plain text that reads well without "
           "markdown rendering.",
    "subagent": "You are a subagent working on one delegated task. Finish it and reply with "
                "a concise summary of what you did and found.",
}


def build_system_prompt(kernel: Any, *, session_id: str, model: str, provider: str,
                        platform: str, tool_names: list[str], cwd: Path | None) -> str:
    try:
        from . import prompt as builder
    except ImportError:
        builder = None
    build = getattr(builder, "build_system_prompt", None) if builder else None
    if build is not None:
        offered = dict(kernel=kernel, session_id=session_id, model=model, provider=provider,
                       platform=platform, tool_names=tool_names, tools=tool_names, cwd=cwd,
                       home=getattr(kernel, "home", None), config=getattr(kernel, "config", None))
        params = inspect.signature(build).parameters
        takes_all = any(p.kind is p.VAR_KEYWORD for p in params.values())
        result = build(**{k: v for k, v in offered.items() if takes_all or k in params})
        return result if isinstance(result, str) else str(getattr(result, "text", result))
    return minimal_prompt(kernel, session_id=session_id, model=model, provider=provider,
                          platform=platform)


def minimal_prompt(kernel: Any, *, session_id: str, model: str, provider: str,
                   platform: str) -> str:
    identity = DEFAULT_IDENTITY
    soul = Path(getattr(kernel, "home", ".")) / "SOUL.md"
    if soul.is_file():
        text = soul.read_text(encoding="utf-8", errors="replace").strip()
        identity = text or identity
    parts = [identity,
             f"Current date: {_dt.date.today().isoformat()}\nSession: {session_id}\n"
             f"Model: {model}\nProvider: {provider}"]
    hint = PLATFORM_HINTS.get(platform)
    if hint:
        parts.append(hint)
    return "\n\n".join(parts)

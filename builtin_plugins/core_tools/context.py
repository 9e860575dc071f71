"""What a tool handler receives besides its arguments: the keyword arguments the agent loop
passes to ``kernel.tools.dispatch(name, args, **kwargs)``.

Every key is optional; a handler reads them through :meth:`ToolCallContext.from_kwargs`.
The loop builds them with :func:`tool_kwargs`, so the names live in one place:

========================  ==============================================================
``session_id``            the session (keys the todo list and "approve for this session")
``task_id``               the agent run; subagents have their own
``turn_id``               the user turn
``tool_call_id``          the model's id for this call
``platform``              ``"cli"``, ``"telegram"``, ... (approval surface, hints)
``cwd``                   working directory for relative paths and ``terminal``
``approval_callback``     ``(ApprovalRequest) -> "once" | "session" | "always" | "deny"``
                          (or ``"interrupted"``: the user pressed Ctrl-C at the prompt);
                          absent: dangerous commands are denied
``clarify_callback``      ``(question, choices | None) -> str``; absent: clarify fails
``interrupt_event``       a ``threading.Event``; when set, a running command is killed
``agent``                 the running agent; its ``history`` (the conversation so far) lets
                          ``todo`` restore a resumed session's list
========================  ==============================================================
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: Answers an approval callback may give.
APPROVAL_CHOICES = ("once", "session", "always", "deny")


@dataclass(frozen=True)
class ApprovalRequest:
    """A dangerous command waiting for a human decision (what the approval callback sees)."""

    command: str
    description: str  # why it needs approval, e.g. "recursive delete; disk formatting"
    pattern_keys: tuple[str, ...]
    session_id: str = ""
    surface: str = "cli"
    timeout: float = 60.0

    @property
    def pattern_key(self) -> str:
        return self.pattern_keys[0] if self.pattern_keys else ""


ApprovalCallback = Callable[[ApprovalRequest], str]
ClarifyCallback = Callable[[str, "list[str] | None"], str]


@dataclass(frozen=True)
class ToolCallContext:
    session_id: str = ""
    task_id: str = ""
    turn_id: str = ""
    tool_call_id: str = ""
    platform: str = ""
    cwd: Path = field(default_factory=Path.cwd)
    approval_callback: ApprovalCallback | None = None
    clarify_callback: ClarifyCallback | None = None
    interrupt_event: threading.Event | None = None
    history: list[dict[str, Any]] | None = None  # the conversation so far, when known

    @classmethod
    def from_kwargs(cls, kwargs: dict[str, Any], default_cwd: Path | None = None) -> "ToolCallContext":
        def text(key: str) -> str:
            value = kwargs.get(key)
            return value if isinstance(value, str) else ""

        cwd = kwargs.get("cwd")
        base = Path(cwd).expanduser() if isinstance(cwd, (str, os.PathLike)) and str(cwd) else (
            default_cwd or Path.cwd())
        approval = kwargs.get("approval_callback")
        clarify = kwargs.get("clarify_callback")
        event = kwargs.get("interrupt_event")
        history = getattr(kwargs.get("agent"), "history", None)
        return cls(session_id=text("session_id"), task_id=text("task_id"), turn_id=text("turn_id"),
                   tool_call_id=text("tool_call_id"), platform=text("platform"),
                   cwd=base.resolve(),
                   approval_callback=approval if callable(approval) else None,
                   clarify_callback=clarify if callable(clarify) else None,
                   interrupt_event=event if isinstance(event, threading.Event) else None,
                   history=history if isinstance(history, list) else None)

    @property
    def state_key(self) -> str:
        """Key for per-session state: the session, else the task, else one shared default."""
        return self.session_id or self.task_id or "default"

    @property
    def surface(self) -> str:
        """Where a human would be asked: a terminal or a chat gateway."""
        return "cli" if self.platform in ("", "cli", "tui", "desktop") else "gateway"

    def resolve(self, path: str) -> Path:
        """``path`` made absolute against the working directory (``~`` expanded)."""
        target = Path(os.path.expanduser(path))
        return target if target.is_absolute() else self.cwd / target


def tool_kwargs(*, session_id: str = "", task_id: str = "", turn_id: str = "",
                tool_call_id: str = "", platform: str = "", cwd: str | Path | None = None,
                approval_callback: ApprovalCallback | None = None,
                clarify_callback: ClarifyCallback | None = None,
                interrupt_event: threading.Event | None = None) -> dict[str, Any]:
    """The keyword arguments to pass to ``kernel.tools.dispatch`` for one tool call."""
    kwargs: dict[str, Any] = {"session_id": session_id, "task_id": task_id, "turn_id": turn_id,
                              "tool_call_id": tool_call_id, "platform": platform}
    if cwd is not None:
        kwargs["cwd"] = str(cwd)
    if approval_callback is not None:
        kwargs["approval_callback"] = approval_callback
    if clarify_callback is not None:
        kwargs["clarify_callback"] = clarify_callback
    if interrupt_event is not None:
        kwargs["interrupt_event"] = interrupt_event
    return kwargs

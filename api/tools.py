"""The tool-call context: one value from the agent's executor to every tool handler.

The executor builds one :class:`ToolCallContext` per call and hands it to
``kernel.tools.dispatch(name, args, context=ctx)``. A handler decorated with
:func:`with_context` receives it as ``handler(args, ctx)``; a handler written for the
original (``handler(args, **kwargs)``) receives ``ctx.as_kwargs()``, so the keyword names
live in one place:

========================  ==============================================================
``session_id``            the session (keys the todo list and "approve for this session")
``task_id``               the agent run; subagents have their own
``turn_id``               the user turn
``tool_call_id``          the model's id for this call
``platform``              ``"cli"``, ``"telegram"``, ... (approval surface, hints)
``cwd``                   working directory for relative paths and ``terminal`` (a string)
``approval_callback``     ``(ApprovalRequest) -> "once" | "session" | "always" | "deny"``
                          (or ``"interrupted"``: the user pressed Ctrl-C at the prompt);
                          absent: dangerous commands are denied
``clarify_callback``      ``(question, choices | None) -> str``; absent: clarify fails
``interrupt_event``       a ``threading.Event``; when set, a running command is killed
``agent``                 the running agent (from ``extra``); its ``history`` (the
                          conversation so far) lets ``todo`` restore a resumed session's list
========================  ==============================================================

:func:`tool_error` and the handler marks are the tool contract of ``hermes_agent.hookspecs``
(the kernel's registry reports failures with it too); ``hermes_agent.kits.tool_results``
reads a result's status and a handler's marks.
"""

from __future__ import annotations

import functools
import json
import os
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from hermes_agent.hookspecs.tool_contract import (
    PARALLEL_SAFE_MARK, PROVENANCE_MARK, TAKES_CONTEXT, SourcedResult, tool_error,
)

__all__ = ["APPROVAL_CHOICES", "ApprovalCallback", "ApprovalRequest", "ClarifyCallback",
           "ToolCallContext", "parallel_safe", "tool_error", "tool_result",
           "untrusted_output", "untrusted_result", "with_context"]

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

# Keyword names that are fields; any other keyword goes to ``extra``.
_FIELDS = ("session_id", "task_id", "turn_id", "tool_call_id", "platform", "chat_id", "cwd",
           "approval_callback", "clarify_callback", "interrupt_event")


@dataclass(frozen=True)
class ToolCallContext:
    """Who calls a tool, where, and how to reach a human: one value per tool call."""

    session_id: str = ""
    task_id: str = ""
    turn_id: str = ""
    tool_call_id: str = ""
    platform: str = ""
    chat_id: str = ""  # the platform's chat the turn answers (the gateway's), "" elsewhere
    cwd: Path = field(default_factory=Path.cwd)  # a string is expanded and resolved
    approval_callback: ApprovalCallback | None = None
    clarify_callback: ClarifyCallback | None = None
    interrupt_event: threading.Event | None = None
    # More keyword arguments for handlers (the agent passes itself as ``agent``).
    extra: Mapping[str, Any] = field(default_factory=dict, hash=False)

    def __post_init__(self) -> None:
        if not isinstance(self.cwd, Path):
            object.__setattr__(self, "cwd", Path(os.path.expanduser(self.cwd)).resolve())

    def as_kwargs(self) -> dict[str, Any]:
        """The keyword arguments a ``handler(args, **kwargs)`` gets for this call."""
        kwargs: dict[str, Any] = {**self.extra, "session_id": self.session_id,
                                  "task_id": self.task_id, "turn_id": self.turn_id,
                                  "tool_call_id": self.tool_call_id, "platform": self.platform,
                                  "chat_id": self.chat_id, "cwd": str(self.cwd)}
        for key in ("approval_callback", "clarify_callback", "interrupt_event"):
            value = getattr(self, key)
            if value is not None:
                kwargs[key] = value
        return kwargs

    @classmethod
    def from_kwargs(cls, kwargs: Mapping[str, Any],
                    default_cwd: Path | None = None) -> "ToolCallContext":
        """The context of a call that came with keyword arguments only: a caller that has no
        context object (``ctx.dispatch_tool`` from another plugin, a test, code written for
        the original) still reaches a :func:`with_context` handler. Wrong types are dropped."""
        def text(key: str) -> str:
            value = kwargs.get(key)
            return value if isinstance(value, str) else ""

        cwd = kwargs.get("cwd")
        base = (Path(cwd).expanduser() if isinstance(cwd, (str, os.PathLike)) and str(cwd)
                else default_cwd or Path.cwd())
        approval, clarify = kwargs.get("approval_callback"), kwargs.get("clarify_callback")
        event = kwargs.get("interrupt_event")
        return cls(session_id=text("session_id"), task_id=text("task_id"),
                   turn_id=text("turn_id"), tool_call_id=text("tool_call_id"),
                   platform=text("platform"), chat_id=text("chat_id"), cwd=Path(base).resolve(),
                   approval_callback=approval if callable(approval) else None,
                   clarify_callback=clarify if callable(clarify) else None,
                   interrupt_event=event if isinstance(event, threading.Event) else None,
                   extra={k: v for k, v in kwargs.items() if k not in _FIELDS})

    @property
    def history(self) -> list[dict[str, Any]] | None:
        """The conversation so far, when the running agent is known."""
        history = getattr(self.extra.get("agent"), "history", None)
        return history if isinstance(history, list) else None

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


ContextHandler = Callable[[dict[str, Any], ToolCallContext], Any]


def with_context(handler: ContextHandler | None = None, *,
                 default_cwd: Path | None = None) -> Any:
    """Mark ``handler(args, ctx: ToolCallContext) -> str`` for the registry, which then
    passes it the call's context. Called with keyword arguments only, the handler gets a
    context built from them (:meth:`ToolCallContext.from_kwargs`; ``cwd`` defaults to
    ``default_cwd``); keyword arguments given beside a context go to its ``extra``.
    Use as ``@with_context`` or ``with_context(fn, default_cwd=...)``."""
    def wrap(fn: ContextHandler) -> Callable[..., Any]:
        @functools.wraps(fn)
        def tool(args: dict[str, Any], context: ToolCallContext | None = None, /,
                 **kwargs: Any) -> Any:
            if context is None:
                context = ToolCallContext.from_kwargs(kwargs, default_cwd)
            elif kwargs:
                context = replace(context, extra={**context.extra, **kwargs})
            return fn(args, context)

        setattr(tool, TAKES_CONTEXT, True)
        return tool

    return wrap if handler is None else wrap(handler)


def parallel_safe(handler: Callable[..., Any]) -> Callable[..., Any]:
    """Mark a handler whose calls may run side by side with other read-only calls of the
    same model response (the agent batches such calls in a thread pool)."""
    setattr(handler, PARALLEL_SAFE_MARK, True)
    return handler


#: A call's arguments (and, if it takes a second parameter, its ToolCallContext) -> the source
#: its result comes from, or None when that result is trusted.
SourceOf = Callable[..., "str | None"]


def untrusted_output(source: "str | SourceOf") -> Callable[[Callable[..., Any]],
                                                          Callable[..., Any]]:
    """Declare that a handler's results are untrusted data: text someone other than the user
    wrote (a web page, an MCP server's answer). ``source`` names where it comes from
    (``"web:example.com"``, ``"mcp:github"``), or is a function of the call's arguments (and of
    its :class:`ToolCallContext`, when it takes two parameters: relative paths resolve against
    ``ctx.cwd``) giving that name, or None for a call whose result is trusted. The agent
    fences such results and taints the turn (docs/security.md)::

        register(..., handler=untrusted_output(lambda args: f"web:{host(args['url'])}")(fn))
    """
    if not (isinstance(source, str) and source.strip()) and not callable(source):
        raise TypeError("untrusted_output needs a source name or a function of the arguments")

    def mark(handler: Callable[..., Any]) -> Callable[..., Any]:
        setattr(handler, PROVENANCE_MARK, source)
        return handler

    return mark


def untrusted_result(text: str, source: str) -> str:
    """A handler's result that is untrusted data from ``source``, for a handler that learns
    where its text came from only while it runs (``read_file`` of a file in a project the user
    has not trusted: ``"project:/path"``). The agent fences it and taints the turn as for
    :func:`untrusted_output`; return it as it is (``str()`` of it drops the mark)."""
    return SourcedResult(text, source)


def tool_result(data: Any = None, **fields: Any) -> str:
    """A tool handler's JSON result: ``data`` if given, else the keyword fields."""
    return json.dumps(data if data is not None else fields, ensure_ascii=False)

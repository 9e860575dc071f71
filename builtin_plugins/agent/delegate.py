"""``delegate_task``: hand self-contained tasks to subagents.

One ``goal``, or a ``tasks`` list run concurrently (at most
``delegation.max_concurrent_children`` per call, default 3); ``background: true`` from the
interactive chat returns at once and the results arrive later as a new message. The children
are run by :mod:`.subagents`; the parent sees only their summaries.
"""

from __future__ import annotations

import json
import weakref
from typing import TYPE_CHECKING, Any

from hermes_agent.api import ToolCallContext, tool_error, with_context

from .subagents import Subagents, Task

if TYPE_CHECKING:
    from .loop import Agent

_TASK = {
    "type": "object",
    "properties": {
        "goal": {"type": "string", "description": "What this subagent must achieve."},
        "context": {"type": "string", "description": "Facts, paths and constraints it needs."},
        "toolsets": {"type": "array", "items": {"type": "string"},
                     "description": "Limit it to these toolsets (optional)."},
    },
    "required": ["goal"],
}
SCHEMA: dict[str, Any] = {
    "name": "delegate_task",
    "description": (
        "Give self-contained tasks to subagents that work with their own context and tools "
        "and return only a summary. Use it for independent research or multi-step work whose "
        "details you do not need in this conversation: one `goal`, or a `tasks` list that "
        "runs in parallel. Subagents cannot ask the user questions, so put everything they "
        "need in `goal` and `context`."),
    "parameters": {
        "type": "object",
        "properties": {
            "goal": {"type": "string", "description": "What the subagent must achieve."},
            "context": {"type": "string",
                        "description": "Facts, paths and constraints the subagent needs."},
            "toolsets": {"type": "array", "items": {"type": "string"},
                         "description": "Limit the subagent to these toolsets (optional)."},
            "tasks": {"type": "array", "items": _TASK,
                      "description": "Several independent tasks, run in parallel (instead of "
                                     "`goal`)."},
            "background": {"type": "boolean",
                           "description": "Return at once; the results arrive as a new "
                                          "message when done (interactive chat only)."},
        },
    },
}
_SUBAGENTS: "weakref.WeakKeyDictionary[Agent, Subagents]" = weakref.WeakKeyDictionary()


def subagents_of(agent: "Agent") -> Subagents:
    """The subagents ``agent`` runs (``/agents`` and ``/stop`` read them)."""
    found = _SUBAGENTS.get(agent)
    if found is None:
        found = _SUBAGENTS.setdefault(agent, Subagents(agent))
    return found


def _tasks(args: dict[str, Any]) -> list[Task] | str:
    """The tasks the call asks for, or what is wrong with them."""
    def toolsets(value: Any) -> list[str] | None:
        return [str(t) for t in value] if isinstance(value, list) and value else None

    listed = args.get("tasks")
    if listed is not None:
        if not isinstance(listed, list) or not listed:
            return "`tasks` must be a non-empty list of {goal, context, toolsets}"
        tasks = []
        for n, item in enumerate(listed):
            goal = str(item.get("goal") or "").strip() if isinstance(item, dict) else ""
            if not goal:
                return f"tasks[{n}] needs a non-empty `goal`"
            tasks.append(Task(goal, str(item.get("context") or "").strip(),
                              toolsets(item.get("toolsets"))))
        return tasks
    goal = str(args.get("goal") or "").strip()
    if not goal:
        return "delegate_task needs a non-empty `goal` (or a `tasks` list)"
    return [Task(goal, str(args.get("context") or "").strip(), toolsets(args.get("toolsets")))]


@with_context
def delegate_task(args: dict[str, Any], ctx: ToolCallContext) -> str:
    from .loop import Agent

    parent = ctx.extra.get("agent")
    if not isinstance(parent, Agent):
        return tool_error("delegate_task runs only inside the agent loop (no parent agent here)")
    tasks = _tasks(args)
    if isinstance(tasks, str):
        return tool_error(tasks)
    config = parent.kernel.config
    max_depth = int(config.get("delegation.max_spawn_depth") or 1)
    if parent.options.depth >= max_depth:
        return tool_error(f"subagents may not delegate further (delegation.max_spawn_depth is "
                          f"{max_depth}); do the task yourself")
    limit = max(1, int(config.get("delegation.max_concurrent_children") or 3))
    if len(tasks) > limit:
        return tool_error(f"{len(tasks)} tasks in one call, more than "
                          f"delegation.max_concurrent_children ({limit}); send at most {limit} "
                          "and delegate the rest when they are done")
    background = bool(args.get("background"))
    note = ""
    if background and (parent.options.depth > 0
                       or not callable(parent.extra_tool_kwargs.get("background_notify"))):
        background = False
        note = ("background delegation needs the interactive chat to deliver its results "
                "later; the tasks ran in the foreground")
    text = subagents_of(parent).run(tasks, turn_id=ctx.turn_id or None,
                                    interrupt=ctx.interrupt_event, background=background)
    if note:
        text = json.dumps({**json.loads(text), "note": note})
    return text


def register(ctx: Any) -> None:
    """Register ``delegate_task`` (toolset ``delegation``)."""
    ctx.register_tool(name="delegate_task", toolset="delegation", schema=SCHEMA,
                      handler=delegate_task, description="Delegate tasks to subagents")

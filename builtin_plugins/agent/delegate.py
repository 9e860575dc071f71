"""``delegate_task``: hand a self-contained task to a subagent.

The child is an :class:`~.loop.Agent` with its own session (linked by ``parent_session_id``),
its own iteration budget (``delegation.max_iterations``, default 50), the parent's tools minus
those that need a human or could recurse, and the parent's interrupt token. The parent sees
only the child's summary. ``subagent_start`` and ``subagent_stop`` fire around it. A tainted
parent's task taints the child; a tainted child's summary is untrusted in the parent.
"""

from __future__ import annotations

import json
import time
from typing import Any

from hermes_agent.api import ToolCallContext, tool_error, with_context

from .provenance import TAINTED_WRITE, SourcedResult

# Tools a subagent never gets: no recursion, no human in the loop, no shared memory writes.
BLOCKED = frozenset({"delegate_task", "clarify", "memory", "send_message", "execute_code"})
CHILD_PROMPT = """You are a focused subagent. Complete this task with your tools, then reply
with a concise summary: what you did, what you found, files you changed and any problems.

TASK:
{goal}
{context}"""

SCHEMA: dict[str, Any] = {
    "name": "delegate_task",
    "description": (
        "Give a self-contained task to a subagent that works with its own context and tools "
        "and returns only a summary. Use it for independent research or multi-step work whose "
        "details you do not need in this conversation. The subagent cannot ask the user "
        "questions, so put everything it needs in `goal` and `context`."),
    "parameters": {
        "type": "object",
        "properties": {
            "goal": {"type": "string", "description": "What the subagent must achieve."},
            "context": {"type": "string",
                        "description": "Facts, paths and constraints the subagent needs."},
            "toolsets": {"type": "array", "items": {"type": "string"},
                         "description": "Limit the subagent to these toolsets (optional)."},
        },
        "required": ["goal"],
    },
}


@with_context
def delegate_task(args: dict[str, Any], ctx: ToolCallContext) -> str:
    from .loop import Agent, AgentOptions

    parent = ctx.extra.get("agent")
    if not isinstance(parent, Agent):
        return tool_error("delegate_task runs only inside the agent loop (no parent agent here)")
    goal = str(args.get("goal") or "").strip()
    if not goal:
        return tool_error("delegate_task needs a non-empty `goal`")
    config = parent.kernel.config
    max_depth = int(config.get("delegation.max_spawn_depth") or 1)
    if parent.options.depth >= max_depth:
        return tool_error(f"subagents may not delegate further (delegation.max_spawn_depth is "
                      f"{max_depth}); do the task yourself")
    allowed = frozenset(parent.tool_names) - BLOCKED
    toolsets = args.get("toolsets")
    if isinstance(toolsets, list) and toolsets:
        wanted, _ = parent.kernel.tools.resolve_toolsets([str(t) for t in toolsets])
        allowed &= frozenset(wanted)
    options = AgentOptions(
        platform="subagent", toolsets=None, only_tools=allowed,
        max_iterations=int(config.get("delegation.max_iterations") or 50), stream=False,
        parent_session_id=parent.session_id, cwd=parent.options.cwd,
        approval_callback=None, clarify_callback=None, depth=parent.options.depth + 1)
    child = Agent(parent.kernel, options, client=parent.client.fork(),
                  store=parent.sessions.store)
    hooks = parent.hooks
    parent_turn = ctx.turn_id or None
    if hooks.has_hook("subagent_start"):
        hooks.fire("subagent_start", parent_session_id=parent.session_id,
                   parent_turn_id=parent_turn, parent_subagent_id=None,
                   child_session_id=child.session_id, child_subagent_id=child.session_id,
                   child_role="leaf", child_goal=goal)
    context = str(args.get("context") or "").strip()
    message = CHILD_PROMPT.format(goal=goal, context=f"\nCONTEXT:\n{context}" if context else "")
    started = time.perf_counter()
    # a tainted parent wrote the task: the child starts tainted (docs/security.md)
    result = child.run_conversation(message, interrupt=ctx.interrupt_event,
                                    source=TAINTED_WRITE if parent.taint.source else None)
    child.finalize("session_boundary")
    duration = (time.perf_counter() - started) * 1000
    status = ("interrupted" if result.interrupted else "completed" if result.completed
              else "failed")
    if hooks.has_hook("subagent_stop"):
        hooks.fire("subagent_stop", parent_session_id=parent.session_id,
                   parent_turn_id=parent_turn, child_session_id=child.session_id,
                   child_role="leaf", child_summary=result.final_response,
                   child_status=status, duration_ms=duration)
    if parent.memory is not None:
        parent.memory.on_delegation(goal, result.final_response or "",
                                    child_session_id=child.session_id)
    payload: dict[str, Any] = {"status": status, "summary": result.final_response,
                               "session_id": child.session_id, "api_calls": result.api_calls,
                               "duration_ms": round(duration)}
    if result.error:
        payload["error"] = result.error
    if child.taint.source is not None:  # its summary carries what it read
        return SourcedResult(json.dumps(payload),
                             f"{TAINTED_WRITE} (a subagent read {child.taint.source})")
    return json.dumps(payload)


def register(ctx: Any) -> None:
    """Register ``delegate_task`` (toolset ``delegation``)."""
    ctx.register_tool(name="delegate_task", toolset="delegation", schema=SCHEMA,
                      handler=delegate_task, description="Delegate a task to a subagent")

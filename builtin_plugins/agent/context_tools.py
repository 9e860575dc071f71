"""The context engine's own tools (``get_tool_schemas`` / ``handle_tool_call``), offered to the
model beside the agent's tools the way memory providers' tools are: a name a registered tool
(or a memory provider's tool) already has is dropped with a warning, a call goes to the
engine, and an exception becomes a tool error (the turn goes on)."""

from __future__ import annotations

import json
import logging
from typing import Any

from hermes_agent.api import ToolCallContext, tool_error

from .engine_calls import call_filtered
from .host import AgentHost

log = logging.getLogger("hermes_agent.agent.context")


def offer(agent: AgentHost, engine: Any) -> None:
    """Add the engine's tools to ``agent.tool_names`` / ``tool_defs`` / ``tool_routes``."""
    engine_name = getattr(engine, "name", "?")
    try:
        schemas = engine.get_tool_schemas()
    except Exception as exc:
        log.warning("context engine %r: get_tool_schemas failed (%s: %s); its tools are not "
                    "offered", engine_name, type(exc).__name__, exc)
        return
    taken = set(agent.kernel.tools.tools) | set(agent.tool_routes)
    only, exclude = agent.options.only_tools, agent.options.exclude_tools
    for schema in schemas if isinstance(schemas, list) else ():
        schema = schema.get("function", schema) if isinstance(schema, dict) else {}
        name = schema.get("name")
        if not isinstance(name, str) or not name:
            continue
        if name in taken:
            log.warning("context engine %r: tool %r clashes with another tool; dropped "
                        "(rename it in the engine's get_tool_schemas)", engine_name, name)
            continue
        taken.add(name)
        if name in exclude or (only is not None and name not in only):
            continue
        agent.tool_names.append(name)
        agent.tool_defs.append({"type": "function", "function": schema})
        agent.tool_routes[name] = _router(engine)
        owner = agent.kernel.slots.owner("context_engine", engine_name)
        agent.tool_origins[name] = ("context", owner or engine_name)


def _router(engine: Any) -> Any:
    def route(name: str, args: dict[str, Any], ctx: ToolCallContext) -> str:
        try:
            result = call_filtered(engine.handle_tool_call, name, args,
                                   session_id=ctx.session_id, task_id=ctx.task_id,
                                   tool_call_id=ctx.tool_call_id, platform=ctx.platform)
        except Exception as exc:
            log.warning("context engine %r: tool %r failed", getattr(engine, "name", "?"),
                        name, exc_info=True)
            return tool_error(f"context engine tool {name!r} failed: "
                              f"{type(exc).__name__}: {exc}")
        return result if isinstance(result, str) else json.dumps(result, default=str)
    return route

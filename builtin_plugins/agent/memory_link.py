"""Where the agent loop meets its memory manager (kept here so :mod:`.loop` stays small).

A top-level agent gets a :class:`~.memory_manager.MemoryManager` when the memory slot holds
a provider; subagents get none (the slot's providers are shared per kernel, so a child must
not re-initialize them; the parent hears of the child through ``on_delegation``).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from hermes_agent.api import ToolCallContext

from .host import AgentHost
from .memory_manager import MemoryManager, provider_name

log = logging.getLogger("hermes_agent.agent.memory")


def attach(agent: AgentHost) -> MemoryManager | None:
    """The agent's manager (None: no memory); offers the providers' tools to the model."""
    if agent.options.depth > 0:
        return None
    try:
        manager = MemoryManager.from_kernel(agent.kernel)
    except Exception as exc:  # memory.provider names nothing installed (SlotError)
        log.warning("memory is off for this agent: %s", exc)
        return None
    if not manager.providers:
        return None
    if not _memory_toolset_on(agent):
        return manager
    routes = manager.tool_routes(set(agent.kernel.tools.tools))
    only, exclude = agent.options.only_tools, agent.options.exclude_tools
    for name, (provider, schema) in routes.items():
        if name in exclude or (only is not None and name not in only):
            continue
        agent.tool_names.append(name)
        agent.tool_defs.append({"type": "function", "function": schema})
        agent.tool_routes[name] = _router(manager, provider)
        owner = agent.kernel.slots.owner("memory", provider_name(provider))
        agent.tool_origins[name] = ("memory", owner or provider_name(provider))
    return manager


def _memory_toolset_on(agent: AgentHost) -> bool:
    """Providers' tools are offered with the ``memory`` toolset: always when no toolsets are
    chosen, else when the choice names it or includes the ``memory`` tool."""
    toolsets = agent.options.toolsets
    if toolsets is None:
        toolsets = agent.kernel.config.get("toolsets")
    return toolsets is None or "memory" in toolsets or "memory" in agent.tool_names


def _router(manager: MemoryManager, provider: Any) -> Any:
    def route(name: str, args: dict[str, Any], ctx: ToolCallContext) -> str:
        return manager.handle_tool_call(provider, name, args, session_id=ctx.session_id,
                                        task_id=ctx.task_id, tool_call_id=ctx.tool_call_id,
                                        platform=ctx.platform)
    return route


def initialize(agent: AgentHost) -> None:
    """``initialize`` of every provider, once, before the first turn's system prompt."""
    manager = agent.memory
    assert manager is not None
    kernel = agent.kernel
    workspace = Path(agent.options.cwd or kernel.cwd or Path.cwd()).expanduser()
    manager.initialize(
        agent.session_id, hermes_home=str(kernel.home), platform=agent.platform,
        user_id=agent.options.sender_id or "", agent_context="primary",
        agent_identity=kernel.home.name or "default", agent_workspace=str(workspace),
        parent_session_id=agent.options.parent_session_id or "",
        **({"chat_id": agent.options.chat_id} if agent.options.chat_id else {}))
    for provider in manager.providers:
        log.debug("memory provider %r initialized for session %s", provider_name(provider),
                  agent.session_id)


def turn_context(agent: AgentHost, user_message: str, context: str) -> str:
    """``on_turn_start`` and ``prefetch``: the turn's request-only context with the fenced
    recall appended (never stored, never in the system prompt)."""
    manager = agent.memory
    if manager is None:
        return context
    turn_number = sum(1 for m in agent.history if m.get("role") == "user")
    cancel = agent._interrupt  # Ctrl-C does not wait for a slow provider
    manager.on_turn_start(turn_number, user_message, cancel=cancel, model=agent.model,
                          platform=agent.platform, tool_count=len(agent.tool_names))
    recalled = "" if cancel.is_set() else manager.prefetch(user_message, cancel=cancel)
    return "\n\n".join(part for part in (context, recalled) if part)


def after_turn(agent: AgentHost, user_message: str, answer: str) -> None:
    """``sync_turn`` then ``queue_prefetch`` for the next turn, both in the background."""
    manager = agent.memory
    if manager is not None:
        manager.sync_turn(user_message, answer, messages=agent.history)
        manager.queue_prefetch(user_message)


def session_switch(agent: AgentHost, old_session_id: str, **kwargs: Any) -> None:
    manager = agent.memory
    if manager is not None and manager.initialized and old_session_id != agent.session_id:
        manager.on_session_switch(agent.session_id, parent_session_id=old_session_id, **kwargs)

"""``/tools enable|disable NAME``, ``/toolsets [enable|disable NAME]``, ``/verbose`` and
``/reasoning``: what the model is offered and what the chat shows, for this chat only
(config.yaml is not changed)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hermes_agent.kits.text import table

if TYPE_CHECKING:
    from .state import ChatState

VERBOSE = ("off", "new", "all", "verbose")  # /verbose goes round these
VERBOSE_SAYS = {"off": "no tool calls shown", "new": "a line when the tool changes",
                "all": "a line for every tool call",
                "verbose": "every call with its full arguments and its result"}
EFFORTS = ("low", "medium", "high")


def tools_switch(state: ChatState, action: str, name: str) -> str:
    agent = state.agent
    registry = state.kernel.tools
    if not name:
        return f"Usage: /tools {action} NAME (/tools lists them)"
    if name not in registry.tools and name not in agent.tool_names:
        return f"Unknown tool {name!r}; /tools lists the tools the model can call."
    excluded = set(agent.options.exclude_tools)
    if action == "disable":
        if name not in agent.tool_names:
            return f"{name} is not offered to the model already."
        agent.options.exclude_tools = frozenset(excluded | {name})
        agent.reselect_tools()
        return f"Disabled {name} for this chat ({len(agent.tool_names)} tools left)."
    if name in excluded:
        agent.options.exclude_tools = frozenset(excluded - {name})
        agent.reselect_tools()
    if name in agent.tool_names:
        return f"Enabled {name} for this chat."
    toolset = registry.tools[name].toolset if name in registry.tools else "?"
    return (f"{name} belongs to toolset {toolset!r}, which this chat does not use; "
            f"/toolsets enable {toolset} adds it.")


def toolsets(state: ChatState, args: str) -> str:
    agent = state.agent
    registry = state.kernel.tools
    action, _, name = args.strip().partition(" ")
    name = name.strip()
    active = _active(state)
    if not action:
        leaves = registry.leaf_toolsets()
        rows = [("on" if toolset in active else "off", toolset,
                 ", ".join(leaves.get(toolset, [])) or "(composite)")
                for toolset in registry.known_toolsets()]
        return "\n".join(["Toolsets (/toolsets enable|disable NAME, for this chat):",
                          *table(("", "TOOLSET", "TOOLS"), rows, indent="  ")])
    if action not in ("enable", "disable") or not name:
        return "Usage: /toolsets [enable|disable NAME]"
    problem = registry.unknown_toolsets([name])
    if problem:
        return problem
    if action == "enable":
        if name in active:
            return f"Toolset {name} is on already."
        active.append(name)
    else:
        if name not in active:
            return f"Toolset {name} is off already."
        active.remove(name)
    agent.options.toolsets = active
    agent.reselect_tools()
    return (f"Toolset {name} {action}d for this chat; the model is offered "
            f"{len(agent.tool_names)} tools.")


def _active(state: ChatState) -> list[str]:
    chosen = state.agent.options.toolsets
    if chosen is None:
        chosen = state.kernel.config.get("toolsets")
    if chosen is None:
        chosen = state.kernel.tools.known_toolsets()
    return list(chosen)


def verbose(state: ChatState, args: str) -> str:
    renderer = state.renderer
    if renderer is None:
        return "/verbose works in the interactive chat."
    wanted = args.strip().lower()
    if wanted and wanted not in VERBOSE:
        return f"Usage: /verbose [{'|'.join(VERBOSE)}] (no argument: the next one)"
    current = "all" if renderer.tools == "live" else renderer.tools
    mode = wanted or VERBOSE[(VERBOSE.index(current) + 1) % len(VERBOSE)
                             if current in VERBOSE else 0]
    renderer.tools = mode
    return f"Tool progress: {mode} ({VERBOSE_SAYS[mode]})."


def reasoning(state: ChatState, args: str) -> str:
    agent, renderer = state.agent, state.renderer
    wanted = args.strip().lower()
    shown = bool(renderer is not None and renderer.show_reasoning)
    if not wanted:
        effort = agent.options.reasoning_effort or "the provider's default"
        return (f"reasoning: {'shown' if shown else 'hidden'}, effort {effort} "
                "(/reasoning show|hide|low|medium|high)")
    if wanted in ("show", "hide"):
        if renderer is None:
            return "/reasoning show works in the interactive chat."
        renderer.show_reasoning = wanted == "show"
        return ("The model's reasoning text is shown as it arrives (when the provider sends "
                "it)." if wanted == "show" else "Reasoning text hidden.")
    if wanted in EFFORTS:
        agent.options.reasoning_effort = wanted
        return (f"Reasoning effort: {wanted}, sent with every request from the next one on "
                "(Anthropic: a thinking budget; OpenAI-style: reasoning_effort).")
    return "Usage: /reasoning [show|hide|low|medium|high]"

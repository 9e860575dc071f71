"""Builtin plugin: tools from MCP servers (``mcp_servers`` in config.yaml; docs/mcp.md).

Nothing starts until the first turn: the ``pre_llm_call`` hook asks the manager
(:mod:`.manager`) to offer the configured servers' tools (from the tool cache, :mod:`.cache`,
starting a server on its first call; else starting it now), re-list the tools of servers
that said they changed and restart crashed ones, between turns; the agent then selects its
tools again. The ``mcp`` SDK is imported only when a server starts. ``hermes mcp`` is in
:mod:`.cli`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hermes_agent import Kernel, PluginContext

    from .manager import McpManager


def register(ctx: "PluginContext") -> None:
    from hermes_agent.api import MCP

    kernel = ctx.kernel
    holder: dict[str, "McpManager"] = {}

    def manager(_kernel: Kernel | None = None) -> "McpManager":
        if "manager" not in holder:
            from .manager import McpManager

            holder["manager"] = McpManager(kernel, ctx.data_dir)
        return holder["manager"]

    def between_turns() -> None:
        if kernel.config.get("mcp_servers"):
            manager().refresh()

    def shutdown() -> None:
        if "manager" in holder:
            holder.pop("manager").close()

    servers = kernel.config.get("mcp_servers")
    if isinstance(servers, dict) and servers:
        from .settings import toolset_name

        for server in servers:  # known before the server starts: `toolsets:` may name it
            ctx.register_toolset(toolset_name(str(server)), kind="leaf",
                                 description=f"the tools of MCP server {server!r}")
    ctx.register_service(MCP, manager)
    ctx.register_hook("pre_llm_call", between_turns,
                      description="start, refresh and restart MCP servers between turns")
    ctx.register_hook("on_shutdown", shutdown, description="stop the MCP servers")

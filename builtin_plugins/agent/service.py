"""The ``agent`` service: how every surface (the CLI, and the gateway, cron and subagents to
come) builds an agent, so each drives the same loop and fires the same hooks."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hermes_agent import Kernel
    from hermes_agent.api import ModelClient, SessionStore

    from .loop import Agent


class AgentService:
    """The ``agent`` service (``hermes_agent.api.AGENT``: an ``AgentFactory``)."""

    def __init__(self, kernel: Kernel):
        self.kernel = kernel

    def create(self, *, session_id: str | None = None, client: ModelClient | None = None,
               store: SessionStore | None = None, **options: Any) -> Agent:
        """A new :class:`~.loop.Agent`; ``options`` are :class:`~.loop.AgentOptions` fields
        (``platform``, ``provider``, ``model``, ``toolsets``, ``cwd``, callbacks, ...)."""
        from .loop import Agent, AgentOptions

        return Agent(self.kernel, AgentOptions(**options), session_id=session_id,
                     client=client, store=store)

    def select_tools(self, toolsets: list[str] | None) -> tuple[list[str], list[str]]:
        """The tools a turn gets from ``toolsets`` (None: every toolset), and notes on what
        was left out; the agent's selection, for surfaces that list it (``hermes tools``)."""
        from .tool_selection import select_tools

        return select_tools(self.kernel.tools, toolsets)

"""Which tools a turn gets: the agent's selection over the kernel's tool registry.

config.yaml's ``toolsets`` (None: every registered toolset) names the toolsets; each is
expanded by the registry (leaf, composite or platform), and a tool whose ``check_fn`` says
it is unavailable is left out, with a note saying so.
"""

from __future__ import annotations

from typing import Any


def select_tools(registry: Any, toolsets: list[str] | None) -> tuple[list[str], list[str]]:
    """The tools ``toolsets`` enable (None: every toolset) whose check_fn passes, in the
    registry's order, and notes on what was left out and why."""
    tools, notes = registry.resolve_toolsets(registry.known_toolsets() if toolsets is None
                                             else toolsets)
    hidden = [tool for tool in tools if not registry.is_available(tool)]
    notes += [f"tool {tool!r} hidden: its check_fn reported it unavailable" for tool in hidden]
    return [tool for tool in tools if tool not in hidden], notes

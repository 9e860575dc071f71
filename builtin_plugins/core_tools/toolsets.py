"""Toolsets of the core tools (names as in Hermes Agent 0.19 configs).

Leaf toolsets group one capability; composites and the ``hermes-cli`` platform toolset include
leaves. A toolset listed here must exist in this version: the kernel notes every include no
loaded plugin provides. Plugins that add a capability the CLI should offer (web, memory,
skills, delegation, ...) add their leaf toolset name to ``HERMES_CLI_INCLUDES``.
"""

from __future__ import annotations

from typing import Any

LEAVES: dict[str, tuple[str, tuple[str, ...]]] = {
    "file": ("Read, write, patch and search files", ("read_file", "write_file", "patch",
                                                     "search_files")),
    "terminal": ("Run shell commands and background processes", ("terminal", "process")),
    "todo": ("Task list for multi-step work", ("todo",)),
    "clarify": ("Ask the user clarifying questions", ("clarify",)),
}

#: Composite toolsets: (description, tools, includes).
COMPOSITES: dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]] = {
    "debugging": ("Terminal and file tools for troubleshooting", (), ("terminal", "file")),
}

#: What the interactive CLI offers (``toolsets: [hermes-cli]``).
HERMES_CLI_INCLUDES: tuple[str, ...] = ("terminal", "file", "todo", "clarify", "memory", "skills",
                                         "delegation", "code_execution", "session_search", "web",
                                         "browser", "cronjob", "vision", "messaging",
                                         "tts", "image_gen")


def register_all(register: Any) -> None:
    """Declare every toolset through a ``register_toolsets`` collector."""
    for name, (description, tools) in LEAVES.items():
        register(name, tools=tools, description=description, kind="leaf")
    for name, (description, tools, includes) in COMPOSITES.items():
        register(name, tools=tools, includes=includes, description=description, kind="composite")
    register("hermes-cli", includes=HERMES_CLI_INCLUDES, kind="platform",
             description="Everything the interactive CLI offers")

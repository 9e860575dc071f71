"""Checking one plugin's staged registrations against what is already live.

Plugins load in install order (:mod:`.install_order`), so a name that is already taken
belongs to a plugin installed earlier (or shipped with hermes): the plugin checked here,
the later one, is the one that fails. A core tool (from a builtin plugin) may be replaced
only by a tool that asks to (``override=True``) and a config grant.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from .errors import PluginError
from .install_order import format_stamp
from .registration import SLOTS, Registration

if TYPE_CHECKING:
    from .discovery import PluginRecord
    from .kernel import Kernel

log = logging.getLogger("hermes_agent.kernel")


def check_registration(kernel: "Kernel", record: "PluginRecord", staged: Registration) -> list[str]:
    """Raise :class:`PluginError` for the first clash; return the core tools it replaces."""
    name = record.name
    replacing: list[str] = []
    seen: set[str] = set()
    for tool in staged.tools:
        if tool.name in seen:
            raise PluginError(name, f"plugin '{name}' registers tool '{tool.name}' twice",
                              code="duplicate")
        seen.add(tool.name)
        owner = kernel.tools.tools.get(tool.name)
        if owner is None:
            continue
        owner_status = kernel.plugins.get(owner.plugin)
        if owner_status is None or owner_status.record.source != "builtin":
            raise clash(kernel, name, "tool", tool.name, owner.plugin,
                        "disable one of them, or rename the tool in one of them")
        granted = bool(kernel.config.plugin_entry(name, *record.aliases).get("allow_tool_override"))
        if not tool.override:
            raise PluginError(name, f"tool '{tool.name}' of plugin '{name}' clashes with the "
                              f"core tool of the same name (plugin '{owner.plugin}'); "
                              "rename it", code="core_tool_override")
        if not granted:
            raise PluginError(name, f"plugin '{name}' asks to replace the core tool "
                              f"'{tool.name}'; allow it with `hermes config set plugins.entries."
                              f"{name}.allow_tool_override true`", code="core_tool_override")
        replacing.append(tool.name)
    for command in staged.commands:
        other = kernel.commands.get(command.name)
        if other is not None:
            raise clash(kernel, name, "slash command", f"/{command.name}", other.plugin,
                        "disable one of them")
    reserved = builtin_cli_names(kernel) if staged.cli_commands else {}
    for cli in staged.cli_commands:
        if reserved.get(cli.name, name) != name:
            raise PluginError(name, f"CLI command 'hermes {cli.name}' is registered by both "
                              f"hermes itself (the builtin plugin '{reserved[cli.name]}') and "
                              f"plugin '{name}'; rename it in plugin '{name}'", code="duplicate")
        other_cli = kernel.cli_commands.get(cli.name)
        if other_cli is not None:
            raise clash(kernel, name, "CLI command", f"hermes {cli.name}", other_cli.plugin,
                        "disable one of them")
    for service in staged.services:
        owner_service = kernel.service_owner(service.name)
        if owner_service is not None:
            raise clash(kernel, name, "service", service.name, owner_service,
                        "disable one of them")
    for provider in staged.providers:
        if provider.slot not in SLOTS:
            raise PluginError(name, f"unknown provider slot {provider.slot!r}; "
                              f"slots: {', '.join(SLOTS)}", code="register_error")
        owner_name = kernel.slots.owner(provider.slot, provider.name)
        if owner_name is not None:
            raise clash(kernel, name, f"{provider.slot} provider", provider.name, owner_name,
                        "disable one of them")
    return replacing


def builtin_cli_names(kernel: "Kernel") -> dict[str, str]:
    """``hermes`` commands the builtin plugins declare (``cli_commands:``), reserved even
    while one is disabled or not loaded: name -> builtin plugin."""
    from .discovery import builtin_records

    return {name: record.name for record in reversed(builtin_records(kernel.cache))
            if record.manifest for name in record.manifest.cli_commands}


def clash(kernel: "Kernel", loser: str, kind: str, what: str, keeper: str, fix: str) -> PluginError:
    """The error failing ``loser``, which registers ``what`` after ``keeper`` did, saying who
    keeps it and why (the install times when known)."""
    stamps = kernel.install_stamps
    if loser in stamps and keeper in stamps:
        kept, lost = stamps[keeper], stamps[loser]
        if kept == lost:
            why = (f"both were installed at {format_stamp(kept)}, and of equal install times "
                   "the name sorting first keeps it")
        else:
            why = (f"'{keeper}' was installed first ({format_stamp(kept)}; "
                   f"'{loser}': {format_stamp(lost)})")
    else:
        why = f"'{keeper}' was loaded first"
    message = (f"{kind} '{what}' is registered by both plugin '{keeper}' and plugin '{loser}': "
               f"'{keeper}' keeps it because {why}, so '{loser}' was not loaded; {fix}")
    return PluginError(loser, message, code="duplicate",
                       clash={"kind": kind, "name": what, "kept_by": keeper, "lost_by": loser})

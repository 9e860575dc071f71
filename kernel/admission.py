"""Admitting a plugin's staged registrations: the first name another plugin already holds
fails the plugin (:class:`PluginError`, saying who keeps it and why), and what its plugin.yaml
declares is compared with what it registered."""

from __future__ import annotations

import difflib
from typing import Any

from .discovery import PluginRecord, builtin_records
from .errors import PluginError
from .policy import format_stamp
from .records import Registration, SlashCommand

# ``kernel`` below is the :class:`~.kernel.Kernel` admitting the plugin; typed ``Any``, as
# the kernel module imports this one (no import circle, not even for type checking).


def check_claims(kernel: Any, record: PluginRecord, staged: Registration) -> list[str]:
    """Raise :class:`PluginError` for the first name already taken (plugins load in
    install order, so the later plugin fails); return the core tools it may replace."""
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
        if not tool.override:
            raise PluginError(name, f"tool '{tool.name}' of plugin '{name}' clashes with the "
                              f"core tool of the same name (plugin '{owner.plugin}'); "
                              "rename it", code="core_tool_override")
        if not kernel.config.plugin_entry(name, *record.aliases).get("allow_tool_override"):
            raise PluginError(name, f"plugin '{name}' asks to replace the core tool "
                              f"'{tool.name}'; allow it with `hermes config set plugins.entries."
                              f"{name}.allow_tool_override true`", code="core_tool_override")
        replacing.append(tool.name)
    # builtin plugins' commands stay reserved while one is disabled or not loaded
    reserved = {cli: r.name for r in reversed(builtin_records(kernel.cache)) if r.manifest
                for cli in r.manifest.cli_commands} if staged.cli_commands else {}
    for cli in staged.cli_commands:
        if reserved.get(cli.name, name) != name:
            raise PluginError(name, f"CLI command 'hermes {cli.name}' is registered by both "
                              f"hermes itself (the builtin plugin '{reserved[cli.name]}') and "
                              f"plugin '{name}'; rename it in plugin '{name}'", code="duplicate")
    commands = kernel.registered(SlashCommand.kind)
    claims = [*(("slash command", f"/{c.name}", commands.get(c.name)) for c in staged.commands),
              *(("CLI command", f"hermes {c.name}", kernel.cli_commands.get(c.name))
                for c in staged.cli_commands),
              *(("service", s.name, kernel._offered.get(s.name)) for s in staged.services),
              *((f"{p.slot} provider", p.name, kernel.slots.providers.get(p.slot, {}).get(p.name))
                for p in staged.providers)]
    for kind, what, holder in claims:
        if holder is not None:
            raise clash(kernel, name, kind, what, holder.plugin, "disable one of them")
    return replacing


def clash(kernel: Any, loser: str, kind: str, what: str, keeper: str, fix: str) -> PluginError:
    """The error failing ``loser``, which registers ``what`` after ``keeper`` did."""
    stamps = kernel.install_stamps
    if loser not in stamps or keeper not in stamps:
        why = f"'{keeper}' was loaded first"
    elif stamps[keeper] == stamps[loser]:
        why = (f"both were installed at {format_stamp(stamps[keeper])}, and of equal install "
               "times the name sorting first keeps it")
    else:
        why = (f"'{keeper}' was installed first ({format_stamp(stamps[keeper])}; "
               f"'{loser}': {format_stamp(stamps[loser])})")
    message = (f"{kind} '{what}' is registered by both plugin '{keeper}' and plugin '{loser}': "
               f"'{keeper}' keeps it because {why}, so '{loser}' was not loaded; {fix}")
    return PluginError(loser, message, code="duplicate",
                       clash={"kind": kind, "name": what, "kept_by": keeper, "lost_by": loser})


def unknown_hook_message(hook: str, how: str) -> str:
    from . import hookspecs

    close = difflib.get_close_matches(hook, [*hookspecs.EVENT_HOOKS, *hookspecs.REGISTRATION_HOOKS], 1)
    hint = f"; did you mean '{close[0]}'?" if close else ""
    return f"{how} names unknown hook '{hook}' (kept, but this version never fires it){hint}"


def declared_mismatch(record: PluginRecord, staged: Registration) -> list[str]:
    manifest = record.manifest
    if manifest is None or manifest.synthesized:
        return []
    notes = []
    for label, declared, actual in (
            ("tools", set(manifest.provides_tools), {t.name for t in staged.tools}),
            ("hooks", set(manifest.provides_hooks), set(staged.hook_names))):
        if declared - actual:
            notes.append(f"declares {label} it did not register: {', '.join(sorted(declared - actual))}"
                         f" (fix provides_{label} in plugin.yaml)")
        if actual - declared:
            notes.append(f"registered {label} its plugin.yaml does not declare: "
                         f"{', '.join(sorted(actual - declared))} (add them to provides_{label})")
    return notes

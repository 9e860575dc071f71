"""Which ``hermes`` commands exist right now, and what runs for each, known without importing
any plugin: the commands plugins declare in plugin.yaml (``cli_commands:``), each usable
while its plugin would load. Used by the click root in :mod:`.root`; the listing
``--help`` shows (with the commands plugins registered in code when they last loaded) is
cached by :mod:`.help_index`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click
from hermes_agent import HermesError, PluginRecord, resolve


@dataclass(frozen=True)
class DeclaredCommand:
    """A command one plugin declares in plugin.yaml."""

    name: str
    entry: str
    help: str
    record: PluginRecord


def declared_commands(records: Iterable[PluginRecord]) -> dict[str, DeclaredCommand]:
    """``hermes`` commands declared by ``records`` (those without a manifest error), for the
    listing; builtin plugins' first. A name declared twice gets a warning on the later record
    (at load, the kernel's clash check decides which plugin keeps it)."""
    usable = [r for r in records if r.manifest is not None and not r.error]
    table: dict[str, DeclaredCommand] = {}
    for record in sorted(usable, key=lambda r: r.source != "builtin"):  # stable: order kept
        for name, spec in record.manifest.cli_commands.items():  # type: ignore[union-attr]
            owner = table.get(name)
            if owner is None:
                table[name] = DeclaredCommand(name, spec.entry, spec.help, record)
                continue
            warning = (f"CLI command 'hermes {name}' is also declared by plugin "
                       f"'{owner.record.name}'; rename it in one of the plugin.yaml files")
            if warning not in record.warnings:
                record.warnings.append(warning)
    return table


@dataclass
class Commands:
    """The declared commands of the plugins found in this home, and why some are off."""

    home: Path
    found: Any  # the Discovery they come from
    declared: dict[str, DeclaredCommand]
    config: Any  # None when config.yaml is invalid: then nothing is known to be off
    env: dict[str, str]
    off: dict[str, str] = field(default_factory=dict)  # name -> why its plugin is off

    @property
    def available(self) -> list[str]:
        return sorted(n for n in self.declared if n not in self.off)

    def loads(self, plugin: str) -> bool:
        """Whether ``plugin`` would load now (True when config.yaml cannot tell)."""
        from hermes_agent import decide

        record = self.found.get(plugin)
        if record is None or self.config is None:
            return record is not None
        return decide(record, self.config, self.env).load


def current(ctx: click.Context) -> Commands:
    """The command table of this invocation, read from plugin.yaml files and config.yaml
    (validated through the cache; no kernel is built, so ``hermes --help`` and
    ``hermes config`` still work with a broken config.yaml)."""
    meta = ctx.find_root().meta
    if "hermes.commands" not in meta:
        meta["hermes.commands"] = _table()
    return meta["hermes.commands"]


def _table() -> Commands:
    from hermes_agent import (ValidationCache, decide, discover, hermes_home, load_config,
                              read_env_file)

    home = hermes_home()
    env = {**read_env_file(home / ".env"), **os.environ}
    cache = ValidationCache(home / "cache" / "validated.json")
    try:
        config = load_config(home, env=env, cache=cache)
    except HermesError:
        config = None
    found = discover(home, env, cache=cache)
    cache.save()
    table = Commands(home, found, declared_commands(found.plugins.values()), config, env)
    for name, command in table.declared.items():
        decision = decide(command.record, config, env) if config is not None else None
        if decision is not None and not decision.load:
            table.off[name] = f"{decision.state}: {decision.reason}"
    return table


def command_for(ctx: click.Context, name: str, boot: bool = True) -> click.Command | None:
    """The click command a declared ``name`` runs (imported now), or one that explains why
    its plugin is off; None when no plugin declares it (or, with ``boot=False``, when its
    plugin would have to be loaded first). The run's kernel is ``ctx``'s root object."""
    table = current(ctx)
    declared = table.declared.get(name)
    if declared is None:
        return None
    record = declared.record
    if name in table.off:
        return unavailable(name, record.name, table.off[name])
    if record.source == "builtin":
        return load(record, name, declared.entry)  # builtin commands run without a boot
    if not boot:
        return None
    kernel = ctx.find_root().obj.kernel()  # a plugin's own package exists once the kernel loaded it
    live = kernel.cli_commands.get(name)  # whoever won a clash holds it
    if live is not None and live.command is not None:  # registered in code as well
        return live.command
    if live is not None and live.entry:
        return load(kernel.plugins[live.plugin].record, name, live.entry)
    status = kernel.plugins.get(record.name)
    why = f"{status.state}: {status.reason}" if status else "not loaded"
    return unavailable(name, record.name, why)


def load(record: Any, name: str, entry: str) -> click.Command:
    """Import the click command at ``entry``, or explain which plugin declares a broken one."""
    try:
        command = resolve(record, entry)
    except (ImportError, AttributeError) as exc:
        raise click.ClickException(f"plugin '{record.name}' declares `hermes {name}` as "
                                   f"{entry!r}, which cannot be imported ({type(exc).__name__}: "
                                   f"{exc}); fix cli_commands in its plugin.yaml") from exc
    if not isinstance(command, click.Command):
        raise click.ClickException(f"plugin '{record.name}' declares `hermes {name}` as "
                                   f"{entry!r}, which is not a click command")
    return command


def unavailable(name: str, plugin: str, why: str) -> click.Command:
    """A stand-in for ``hermes NAME`` whose plugin is off: running it says why and fails."""
    def explain() -> None:
        raise click.ClickException(f"`hermes {name}` is unavailable because plugin '{plugin}', "
                                   f"which adds it, is {why}")

    return click.Command(name, callback=explain, add_help_option=False,
                         help=f"(unavailable: plugin '{plugin}' is off)",
                         context_settings={"ignore_unknown_options": True,
                                           "allow_extra_args": True})

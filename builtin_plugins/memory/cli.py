"""`hermes memory status | show | setup | off | edit`: builtin memory and the external memory
provider (the ``memory`` slot, chosen by ``memory.provider``)."""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

import click
from hermes_agent.kits.memory_health import load_health
from hermes_agent.kits.text import plural
from hermes_agent.kits.cli import ListingGroup, cli_kernel

from . import TARGETS, memory_file
from .providers import memory_providers
from .store import usage

if TYPE_CHECKING:
    from hermes_agent import Kernel

TARGET = click.Choice(sorted(TARGETS))


def _ago(ts: float) -> str:
    if not ts:
        return "never"
    seconds = max(0, int(time.time() - ts))
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{seconds // size} {unit} ago"
    return f"{seconds} s ago"


def _available(provider: Any) -> tuple[bool | None, str]:
    try:
        return bool(provider.is_available()), ""
    except Exception as exc:  # a provider's check must not break the status command
        return None, f"is_available() raised {type(exc).__name__}: {exc}"


def status_data(kernel: Kernel) -> dict[str, Any]:
    builtin = {}
    for name in TARGETS:
        store = memory_file(kernel, name)
        state = store.read()
        builtin[name] = {"file": str(store.path), "entries": len(state.entries),
                         "used": state.used, "limit": store.target.limit,
                         "usage": usage(state.used, store.target.limit),
                         "problem": state.problem}
    selected = str(kernel.config.get("memory.provider") or "")
    external: dict[str, Any] | None = None
    if selected:
        status = memory_providers(kernel).get(selected)
        external = {"name": selected, "plugin": status.name if status else None,
                    "state": status.state if status else "not installed",
                    "reason": status.reason if status else
                    "no installed plugin provides it (see `hermes memory setup`)",
                    "available": None, "health": None}
        if status is not None and status.state == "loaded":
            try:
                provider = kernel.slots.get("memory", selected)
            except Exception as exc:
                external["reason"] = str(exc)
            else:
                external["available"], problem = _available(provider)
                external["reason"] = problem or external["reason"]
                selected = str(getattr(provider, "name", selected))
        record = load_health(kernel.home).get(selected)
        external["health"] = record.__dict__ if record else None
    others = sorted(n for n in memory_providers(kernel) if external is None
                    or n not in (external["name"], external["plugin"]))
    return {"builtin": builtin, "provider": external, "other_providers": others}


@click.group(cls=ListingGroup, default="status")
def memory() -> None:
    """Builtin memory (MEMORY.md, USER.md) and the external memory provider."""


@memory.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def status(as_json: bool) -> None:
    """Builtin memory's usage and the external provider's state, availability and health."""
    data = status_data(cli_kernel())
    if as_json:
        click.echo(json.dumps(data, indent=2))
        return
    click.echo("Builtin memory (always on)")
    for name, row in data["builtin"].items():
        count = plural(row["entries"], "entry", "entries") if row["entries"] else "empty"
        click.echo(f"  {TARGETS[name][0]:<10} {count:<11} {row['usage']:<24} {row['file']}")
        if row["problem"]:
            click.echo(f"    problem: {row['problem']}")
    external = data["provider"]
    if external is None:
        click.echo("External provider: none (memory.provider is empty)")
    else:
        plugin = f" (plugin {external['plugin']})" if external["plugin"] not in (
            None, external["name"]) else ""
        click.echo(f"External provider: {external['name']}{plugin}")
        available = {True: "yes", False: "no (is_available() is false: check its settings "
                     "and keys)", None: "unknown"}[external["available"]]
        click.echo(f"  state: {external['state']}" + (
            f" · available: {available}" if external["state"] == "loaded" else ""))
        if external["reason"]:
            click.echo(f"  {external['reason']}")
        health = external["health"]
        if health:
            if health["last_prefetch_ms"] >= 0:
                click.echo(f"  last prefetch: {health['last_prefetch_ms']:.1f} ms, "
                           f"{plural(health['last_prefetch_chars'], 'char')}, "
                           f"{_ago(health['last_prefetch_at'])}")
            click.echo(f"  last sync: {_ago(health['last_sync_at'])} · calls: {health['calls']}"
                       f" · failures: {health['failures']} · timeouts: {health['timeouts']}")
            if health["last_error"]:
                click.echo(f"  last error ({_ago(health['last_error_at'])}): "
                           f"{health['last_error']}")
        else:
            click.echo("  no calls recorded yet (health is recorded by `hermes chat`)")
    if data["other_providers"]:
        click.echo(f"Other memory providers: {', '.join(data['other_providers'])}")
    click.echo("Change it: hermes memory setup [NAME] · builtin only: hermes memory off")


@memory.command()
@click.argument("target", type=TARGET, required=False)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def show(target: str | None, as_json: bool) -> None:
    """The entries of MEMORY.md and USER.md as they are now (a new session's prompt shows
    them; a running session keeps the snapshot it started with)."""
    kernel = cli_kernel(boot=False)
    names = [target] if target else list(TARGETS)
    rows = {}
    for name in names:
        store = memory_file(kernel, name)
        state = store.read()
        rows[name] = {"file": str(store.path), "entries": list(state.entries),
                      "usage": usage(state.used, store.target.limit), "problem": state.problem}
    if as_json:
        click.echo(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    for name, row in rows.items():
        click.echo(f"{TARGETS[name][1]} [{row['usage']}] {row['file']}")
        if row["problem"]:
            click.echo(f"  problem: {row['problem']}")
        for number, entry in enumerate(row["entries"], start=1):
            lines = entry.splitlines() or [""]
            click.echo(f"  {number}. {lines[0]}")
            for line in lines[1:]:
                click.echo(f"     {line}")
        if not row["entries"] and not row["problem"]:
            click.echo("  (no entries)")


@memory.command()
def off() -> None:
    """Use builtin memory only (memory.provider set to empty). Builtin memory itself cannot be
    turned off; empty its files with `hermes memory edit` instead."""
    from hermes_agent import write_config_value

    kernel = cli_kernel(boot=False)
    current = str(kernel.config.get("memory.provider") or "")
    if not current:
        click.echo("No external memory provider is on; builtin memory stays on (it cannot be "
                   "turned off).")
        return
    write_config_value(kernel.home, "memory.provider", "")
    click.echo(f"External memory provider {current!r} turned off (memory.provider is empty). "
               "Builtin memory stays on. Its data is kept: `hermes memory setup "
               f"{current}` turns it back on.")


@memory.command()
@click.argument("name", required=False)
@click.option("--set", "pairs", multiple=True, metavar="KEY=VALUE",
              help="A setting of the provider (repeatable); asked for when missing at a terminal.")
def setup(name: str | None, pairs: tuple[str, ...]) -> None:
    """Choose the external memory provider and enter its settings: secrets go to
    $HERMES_HOME/.env, other settings to config.yaml."""
    from .cli_setup import run_setup

    run_setup(name, pairs)


@memory.command()
@click.argument("target", type=TARGET, default="memory")
def edit(target: str) -> None:
    """Edit MEMORY.md (or USER.md with `user`) in $VISUAL/$EDITOR. The edit is checked
    (UTF-8 text, within the limit, no prompt injection) before it replaces the file."""
    from .cli_edit import run_edit

    run_edit(target)

"""`hermes plugins list | info | enable | disable`."""

from __future__ import annotations

import difflib
import json

import click
from hermes_agent import Kernel, write_config_value
from hermes_agent.kits.cli import ListingGroup, cli_kernel

from .listing import format_lock_notes, format_table, plugin_rows
from .lockfile import lock_notes


@click.group(cls=ListingGroup, default="list")
def plugins() -> None:
    """List, inspect, enable, install and manage plugins."""


@plugins.command(name="list")
@click.option("--all", "show_all", is_flag=True, help="Include builtin plugins.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option("--load", is_flag=True, help="Load enabled plugins now (imports their code) "
              "instead of reporting the last load.")
def list_plugins(show_all: bool, as_json: bool, load: bool) -> None:
    """Show every discovered plugin and its state."""
    kernel = cli_kernel(boot=load)
    lock = lock_notes(kernel.home)  # read once for the rows and the lines below them
    rows = plugin_rows(kernel, include_builtin=show_all, notes=lock)
    notes = format_lock_notes(lock)  # on stderr with --json: stdout stays JSON
    if as_json:
        click.echo(json.dumps(rows, indent=2))
    else:
        click.echo(format_table(rows))
    if notes:
        click.echo(notes, err=as_json)


def resolve(kernel: Kernel, name: str):  # type: ignore[no-untyped-def]
    record = kernel.discover().get(name)
    if record is None:
        problems = [r for r in kernel.discover().problems if r.name == name]
        if problems:
            return problems[0]
        known = [r.name for r in kernel.discover().all_records()]
        close = [k for k in known if k.startswith(name) or name in k][:3]
        close += [c for c in difflib.get_close_matches(name, known, 3, 0.5) if c not in close]
        hint = f" Did you mean: {', '.join(close)}?" if close else ""
        raise click.ClickException(f"no plugin named {name!r} is installed.{hint} "
                                   "See `hermes plugins list --all`.")
    return record


@plugins.command()
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def info(name: str, as_json: bool) -> None:
    """Show everything known about one plugin."""
    kernel = cli_kernel(boot=False)
    record = resolve(kernel, name)
    row = next(r for r in plugin_rows(kernel, include_builtin=True) if r["name"] == record.name)
    manifest = record.manifest
    if manifest is not None:
        row["author"] = manifest.author
        row["requires_env"] = [{"name": e.name, "set": bool(kernel.env.get(e.name)),
                                "description": e.description, "url": e.url} for e in manifest.requires_env]
        row["declared_tools"] = list(manifest.provides_tools)
        row["declared_hooks"] = list(manifest.provides_hooks)
    if as_json:
        click.echo(json.dumps(row, indent=2))
        return
    for key in ("name", "version", "kind", "source", "location", "description", "author",
                "state", "reason", "lock_problem"):
        if row.get(key):
            click.echo(f"{key + ':':14}{row[key]}")
    for env in row.get("requires_env", []):
        click.echo(f"{'env:':14}{env['name']} ({'set' if env['set'] else 'MISSING'})"
                   + (f" — {env['description']}" if env["description"] else ""))
    for key in ("tools", "hooks", "commands", "cli_commands", "providers", "skills"):
        if row.get(key):
            click.echo(f"{key + ':':14}{', '.join(row[key])}")
    for warning in row["warnings"]:
        click.echo(f"{'warning:':14}{warning}")
    for shadow in row["shadows"]:
        click.echo(f"{'shadows:':14}{shadow}")


def _names(record) -> list[str]:  # type: ignore[no-untyped-def]
    return [record.name, *record.aliases]


@plugins.command()
@click.argument("name")
def enable(name: str) -> None:
    """Enable a plugin (writes plugins.enabled in config.yaml)."""
    kernel = cli_kernel(boot=False)
    record = resolve(kernel, name)
    disabled = [n for n in kernel.config.plugins_disabled if n not in _names(record)]
    if disabled != kernel.config.plugins_disabled:
        write_config_value(kernel.home, "plugins.disabled", disabled)
    if record.source != "builtin":
        enabled = list(kernel.config.plugins_enabled or [])
        if record.name not in enabled:
            write_config_value(kernel.home, "plugins.enabled", [*enabled, record.name])
    click.echo(f"✓ Plugin {record.name} enabled. It loads in the next session.")
    if record.error:
        click.echo(f"  Note: it cannot load yet: {record.error}", err=True)
    from .python_deps import missing_python_dependencies, pip_command

    missing = missing_python_dependencies(record.manifest)
    if missing:
        click.echo(f"  Note: it needs Python packages that are not installed "
                   f"({', '.join(missing)}); install them with:\n    {pip_command(missing)}",
                   err=True)


@plugins.command()
@click.argument("name")
def disable(name: str) -> None:
    """Disable a plugin (writes plugins.disabled in config.yaml; the deny-list always wins)."""
    kernel = cli_kernel(boot=False)
    record = resolve(kernel, name)
    if record.source == "builtin" and record.manifest and record.manifest.essential:
        raise click.ClickException(f"plugin {record.name!r} is essential and cannot be disabled "
                                   "(it is marked `essential: true` in its plugin.yaml)")
    enabled = kernel.config.plugins_enabled
    if enabled and any(n in enabled for n in _names(record)):
        write_config_value(kernel.home, "plugins.enabled",
                           [n for n in enabled if n not in _names(record)])
    disabled = kernel.config.plugins_disabled
    if record.name not in disabled:
        write_config_value(kernel.home, "plugins.disabled", [*disabled, record.name])
    click.echo(f"✗ Plugin {record.name} disabled. Takes effect in the next session.")
    commands = sorted(record.manifest.cli_commands) if record.manifest else []
    if commands:
        click.echo(f"  Its commands are off until it is enabled again: "
                   f"{', '.join(f'hermes {c}' for c in commands)}.")


from .manage_cmd import add_management_commands  # noqa: E402  (the management commands)

add_management_commands(plugins)

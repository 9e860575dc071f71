"""`hermes tools list`.

By default no plugin code runs: the tools are those the last real load registered (the load
ledger keeps each one's toolset and description) and, for a plugin not loaded since it last
changed, those its plugin.yaml declares. ``--load`` loads plugins now and adds whether each
tool is available and selected by config.
"""

from __future__ import annotations

import json
from typing import Any

import click
from hermes_agent import Kernel
from hermes_agent.api import AGENT
from hermes_agent.kits.cli import ListingGroup, cli_kernel

from .ledger import recorded_statuses


@click.group(cls=ListingGroup, default="list")
def tools() -> None:
    """List tools and toolsets."""


@tools.command(name="list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option("--load", is_flag=True, help="Load plugins now (runs their code) to show which "
              "tools are available and selected.")
def list_tools(as_json: bool, load: bool) -> None:
    """Every tool: its toolset and plugin; with --load, availability and whether config
    selects it."""
    if load:
        rows, notes = _loaded_rows(cli_kernel())
    else:
        rows, notes = _recorded_rows(cli_kernel(boot=False)), []
    if as_json:
        click.echo(json.dumps({"tools": rows, "notes": notes}, indent=2))
        return
    if not rows:
        click.echo("No tools registered. Enable a plugin that provides tools: `hermes plugins list`.")
    width = max((len(r["name"]) for r in rows), default=4)
    for row in rows:
        if load:
            mark = "✓" if row["selected"] else ("✗" if not row["available"] else "·")
        else:
            mark = "✓" if row["loaded"] else "·"
        click.echo(f"{mark} {row['name'].ljust(width)}  {row['toolset'] or '?'}  ({row['plugin']})")
    if rows and not load:
        click.echo("✓ registered at the last load, · declared in plugin.yaml only. "
                   "`hermes tools list --load` loads plugins and shows what is selected.")
    for note in notes:
        click.echo(f"note: {note}", err=True)


def _loaded_rows(kernel: Kernel) -> tuple[list[dict[str, Any]], list[str]]:
    selected, notes = kernel.service(AGENT).select_tools(kernel.config.get("toolsets"))
    rows = [{"name": spec.name, "toolset": spec.toolset, "plugin": spec.plugin, "loaded": True,
             "available": kernel.tools.is_available(spec.name), "selected": spec.name in selected,
             "description": spec.schema.get("description", spec.description)}
            for spec in sorted(kernel.tools.tools.values(), key=lambda s: (s.toolset, s.name))]
    return rows, notes


def _recorded_rows(kernel: Kernel) -> list[dict[str, Any]]:
    """Tools of the plugins that load, from the ledger and plugin.yaml; imports nothing."""
    rows = []
    for item in recorded_statuses(kernel):
        status = item.status
        if status.state not in ("loaded", "enabled"):
            continue
        info = (item.outcome or {}).get("tool_info", {})
        registered = set(status.tools) if item.outcome is not None else set()
        declared = status.record.manifest.provides_tools if status.record.manifest else ()
        for name in dict.fromkeys([*status.tools, *declared]):
            details = info.get(name, {})
            rows.append({"name": name, "toolset": details.get("toolset", ""),
                         "plugin": status.name, "loaded": name in registered,
                         "description": details.get("description", "")})
    return sorted(rows, key=lambda r: (r["toolset"] or "~", r["name"]))

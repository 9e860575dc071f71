"""`hermes tools list`."""

from __future__ import annotations

import json

import click

from hermes_agent import runtime_kernel
from ..cli_help import ListingGroup


@click.group(cls=ListingGroup, default="list")
def tools() -> None:
    """List tools and toolsets."""


@tools.command(name="list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def list_tools(as_json: bool) -> None:
    """Every registered tool: its toolset, plugin, availability and whether config selects it."""
    kernel = runtime_kernel()
    selected, notes = kernel.tools.selected(kernel.config.get("toolsets"))
    rows = [{"name": spec.name, "toolset": spec.toolset, "plugin": spec.plugin,
             "available": kernel.tools.is_available(spec.name), "selected": spec.name in selected,
             "description": spec.schema.get("description", spec.description)}
            for spec in sorted(kernel.tools.tools.values(), key=lambda s: (s.toolset, s.name))]
    if as_json:
        click.echo(json.dumps({"tools": rows, "notes": notes}, indent=2))
        return
    if not rows:
        click.echo("No tools registered. Enable a plugin that provides tools: `hermes plugins list`.")
    width = max((len(r["name"]) for r in rows), default=4)
    for row in rows:
        mark = "✓" if row["selected"] else ("✗" if not row["available"] else "·")
        click.echo(f"{mark} {row['name'].ljust(width)}  {row['toolset']}  ({row['plugin']})")
    for note in notes:
        click.echo(f"note: {note}", err=True)

"""``hermes processes`` (the background processes kept running with ``keep: true``) and
``hermes processes kill ID``."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import click
from hermes_agent.kits.cli import ListingGroup, cli_kernel

from .kept import kill_kept, list_kept


def _folder() -> Path:
    return Path(cli_kernel(boot=False).home) / "processes"


def _age(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f}s"
    if seconds < 7200:
        return f"{seconds / 60:.0f}m"
    return f"{seconds / 3600:.1f}h"


@click.group(name="processes", cls=ListingGroup, default="list")
def processes() -> None:
    """Background processes the agent started with keep: true (docs/tools.md)."""


@processes.command(name="list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def list_command(as_json: bool) -> None:
    """The kept processes: id, pid, status, age, command and log file."""
    found = list_kept(_folder())
    if as_json:
        click.echo(json.dumps([proc.as_dict() for proc in found], indent=2))
        return
    if not found:
        click.echo("No kept background processes.")
        return
    now = time.time()
    for proc in found:
        status = "running" if proc.alive else f"exited ({proc.exit_code})"
        click.echo(f"{proc.id}  pid {proc.pid}  {status}  {_age(now - proc.started)}  "
                   f"{proc.command}")
        click.echo(f"    log: {proc.log}")


@processes.command()
@click.argument("proc_id")
def kill(proc_id: str) -> None:
    """Stop the kept process PROC_ID (its whole process group) and drop its record."""
    stopped = kill_kept(_folder(), proc_id)
    if stopped is None:
        click.echo(f"No kept process {proc_id!r}; `hermes processes` lists them.", err=True)
        sys.exit(1)
    click.echo(f"{proc_id}: {'killed' if stopped.alive else 'had exited'}; log kept at "
               f"{stopped.log}")

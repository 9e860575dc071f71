"""``hermes sandbox status`` (the mechanism, writable roots, hidden paths, network) and
``hermes sandbox run -- CMD`` (a command run as the agent's terminal would run it)."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import click
from hermes_agent.kits.cli import ListingGroup, cli_kernel

from .policy import SandboxPolicy, policy_for
from .runner import SandboxUnavailable, launch, warn_if_unconfined
from .status import sandbox_status, status_lines

__all__ = ["sandbox", "status_lines"]


def _policy() -> tuple[Any, SandboxPolicy]:
    kernel = cli_kernel(boot=False)
    return kernel, policy_for(kernel.config, Path.cwd(), Path(kernel.home))


@click.group(name="sandbox", cls=ListingGroup)
def sandbox() -> None:
    """The OS sandbox of the commands the agent runs (docs/sandbox.md)."""


@sandbox.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def status(as_json: bool) -> None:
    """The mechanism in use and why, the writable roots, the hidden paths and the network."""
    kernel = cli_kernel(boot=False)
    found = sandbox_status(kernel.config, Path.cwd(), Path(kernel.home))
    if as_json:
        click.echo(json.dumps(found.model_dump(), indent=2))
        return
    for line in status_lines(found):
        click.echo(line)


@sandbox.command(context_settings={"ignore_unknown_options": True})
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
def run(command: tuple[str, ...]) -> None:
    """Run COMMAND (after --) as the agent's terminal would: same sandbox, same environment."""
    from hermes_agent.kits.secrets import command_env

    from ..terminal import COMMAND_VARS

    kernel, policy = _policy()
    warning = warn_if_unconfined(policy)
    if warning:
        click.echo(warning, err=True)
    line = command[0] if len(command) == 1 else shlex.join(command)
    shell = shutil.which("bash") or "/bin/sh"
    opted_in = kernel.config.get("terminal.env_passthrough") or ()
    env = command_env(kernel, COMMAND_VARS, opted_in)
    try:
        how = launch(policy, [shell, "-c", line], Path.cwd(), env)
    except SandboxUnavailable as exc:
        click.echo(f"Not run: {exc}.", err=True)
        sys.exit(2)
    with how:
        done = subprocess.run(how.argv, cwd=Path.cwd(), stdin=subprocess.DEVNULL, env=how.env,
                              preexec_fn=how.preexec_fn)
    sys.exit(done.returncode)

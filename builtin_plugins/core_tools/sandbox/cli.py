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

from .bwrap import PRIVATE_TMP
from .policy import SandboxPolicy, policy_for
from .runner import confine, mechanism, warn_if_unconfined


def _policy() -> tuple[Any, SandboxPolicy]:
    kernel = cli_kernel(boot=False)
    return kernel, policy_for(kernel.config, Path.cwd(), Path(kernel.home))


def status_lines(policy: SandboxPolicy) -> list[str]:
    found = mechanism()
    if not policy.confined:
        used = "off (sandbox.mode: off in config.yaml): commands run unconfined"
    elif found.works:
        used = f"{found.name} ({found.path}{', ' + found.version if found.version else ''})"
    else:
        used = f"NONE, commands are NOT confined: {found.why_none}"
    lines = [f"mechanism: {used}", f"mode: {policy.mode}",
             f"workspace: {policy.workspace or 'none: ' + policy.why_no_workspace}",
             "writable:"]
    lines += [f"  {root}{'' if root.exists() else ' (missing)'}" for root in policy.writable]
    lines += [f"  {PRIVATE_TMP} (private, empty at each command)", "hidden:"]
    lines += [f"  {path}{'' if path.exists() else ' (absent)'}" for path in policy.hidden]
    lines.append(f"network: {'on' if policy.network else 'off'}")
    return lines


@click.group(name="sandbox", cls=ListingGroup)
def sandbox() -> None:
    """The OS sandbox of the commands the agent runs (docs/sandbox.md)."""


@sandbox.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def status(as_json: bool) -> None:
    """The mechanism in use, the writable roots, the hidden paths and the network."""
    _kernel, policy = _policy()
    if as_json:
        found = mechanism()
        click.echo(json.dumps({
            "mechanism": found.name if policy.confined else "off", "why_none": found.why_none,
            "mode": policy.mode, "workspace": str(policy.workspace or ""),
            "why_no_workspace": policy.why_no_workspace,
            "writable": [str(p) for p in policy.writable], "private_tmp": PRIVATE_TMP,
            "hidden": [str(p) for p in policy.hidden], "network": policy.network}, indent=2))
        return
    for line in status_lines(policy):
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
    done = subprocess.run(confine(policy, [shell, "-c", line], Path.cwd()), cwd=Path.cwd(),
                          stdin=subprocess.DEVNULL,
                          env=command_env(kernel, COMMAND_VARS, opted_in))
    sys.exit(done.returncode)

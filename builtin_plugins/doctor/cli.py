"""``hermes doctor [--json] [--offline] [--problems]``: every finding of every plugin's
``doctor_checks`` hook, problems first; exit status 1 when there is a problem."""

from __future__ import annotations

import json
import os

import click
from hermes_agent import ConfigError, HermesError, hermes_home
from hermes_agent.api import Finding
from hermes_agent.kits.cli import cli_kernel, secret_file_notes
from hermes_agent.kits.secrets import mask_secrets

from .gather import from_kernel, without_kernel

MARKS = {"ok": "✓", "warn": "!", "problem": "✗"}
ORDER = {"problem": 0, "warn": 1, "ok": 2}


def findings(offline: bool) -> list[Finding]:
    """What the checks found, problems first (a stable sort: each plugin's order is kept)."""
    try:
        kernel = cli_kernel(boot=False)
    except ConfigError as exc:
        found = without_kernel(hermes_home(), os.environ, exc, secret_file_notes())
    else:
        try:
            kernel.boot()
        except HermesError as exc:
            found = [Finding("plugins", "problem", f"the plugins could not be loaded: {exc}",
                             "fix what the message names, then run `hermes doctor` again"),
                     *from_kernel(kernel, offline)]
        else:
            found = from_kernel(kernel, offline)
    return sorted(found, key=lambda f: ORDER[f.status])


def render(found: list[Finding]) -> str:
    lines = []
    for finding in found:
        lines.append(f"{MARKS[finding.status]} {finding.check}: {finding.detail}")
        if finding.fix and finding.status != "ok":
            lines.append(f"    fix: {finding.fix}")
    problems = sum(f.status == "problem" for f in found)
    warnings = sum(f.status == "warn" for f in found)
    lines.append(summary(problems, warnings))
    return mask_secrets("\n".join(lines))


def summary(problems: int, warnings: int) -> str:
    if not problems and not warnings:
        return "No problems found."
    parts = [f"{problems} problem{'s' * (problems != 1)}"] if problems else []
    parts += [f"{warnings} warning{'s' * (warnings != 1)}"] if warnings else []
    return " and ".join(parts) + " found."


@click.command(name="doctor")
@click.option("--json", "as_json", is_flag=True, help="Print the findings as JSON.")
@click.option("--offline", is_flag=True, help="Make no network connection (skip the probes "
              "of the model providers and servers).")
@click.option("--problems", "only_problems", is_flag=True,
              help="Show only what is wrong (problems and warnings).")
def doctor(as_json: bool, offline: bool, only_problems: bool) -> None:
    """Check everything that can be wrong (config.yaml, keys, the model providers, the sandbox,
    file modes, plugins, the session store, disk space, the cache key) and say how to fix each.
    Exit status 1 when a problem is found (docs/doctor.md)."""
    found = findings(offline)
    problems = sum(f.status == "problem" for f in found)
    shown = [f for f in found if f.status != "ok"] if only_problems else found
    if as_json:
        click.echo(mask_secrets(json.dumps({
            "problems": problems, "warnings": sum(f.status == "warn" for f in found),
            "findings": [f.to_dict() for f in shown]}, indent=2)))
    else:
        click.echo(render(shown) if shown or not only_problems else "No problems found.")
    click.get_current_context().exit(1 if problems else 0)

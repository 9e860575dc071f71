"""Asking for the environment variables a plugin needs (written to $HERMES_HOME/.env with
``hermes_agent.kits.files.set_env_values``), and the names `hermes config set` keeps in .env."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import click
from hermes_agent import EnvRequirement

if TYPE_CHECKING:
    from hermes_agent import Kernel

#: an environment variable's name as `hermes config set` takes it (config.yaml's are lower case)
ENV_NAME = re.compile(r"[A-Z][A-Z0-9_]*\Z")


def declared_env(kernel: Kernel) -> dict[str, bool]:
    """The variables the discovered plugins declare (``requires_env``/``optional_env`` of
    their plugin.yaml: model providers' keys, platforms' tokens...) -> whether secret. Reads
    plugin.yaml files only; imports no plugin."""
    declared: dict[str, bool] = {}
    for record in kernel.discover().plugins.values():
        manifest = record.manifest
        if manifest is not None:
            for req in (*manifest.requires_env, *manifest.optional_env):
                declared[req.name] = declared.get(req.name, False) or req.secret
    return declared


def read_secret_line(label: str, secret: bool) -> str:
    """Prompt for one value; hidden on a terminal when ``secret``. Reads plain stdin otherwise,
    so scripts and tests can pipe answers."""
    if sys.stdin.isatty():
        return str(click.prompt(label, default="", show_default=False, hide_input=secret))
    click.echo(f"{label}: ", nl=False, err=True)
    line = sys.stdin.readline()
    click.echo("", err=True)
    return line.rstrip("\r\n")


def prompt_missing_env(requirements: tuple[EnvRequirement, ...], env: Mapping[str, str],
                       env_path: Path, no_input: bool) -> dict[str, str]:
    """Ask for each required variable that is not set yet; returns the values to save.
    An empty answer skips the variable (the plugin then reports it as missing)."""
    values: dict[str, str] = {}
    for req in requirements:
        if env.get(req.name) or os.environ.get(req.name):
            continue
        if no_input:
            click.echo(f"  {req.name} is not set; the plugin stays off until you add it to "
                       f"{env_path} or export it.", err=True)
            continue
        if req.description:
            click.echo(f"  {req.name}: {req.description}")
        if req.url:
            click.echo(f"  Get it at {req.url}")
        answer = read_secret_line(f"  Value for {req.name} (empty to skip)", req.secret).strip()
        if answer:
            values[req.name] = answer
        else:
            click.echo(f"  Skipped; add {req.name} to {env_path} later.")
    return values

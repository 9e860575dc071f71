"""$HERMES_HOME/.env: setting values without disturbing the user's other lines, mode 0600."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path

import click

from hermes_agent import EnvRequirement, private_dir, write_atomic

_KEY = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=")
_PLAIN = re.compile(r"^[A-Za-z0-9_./:@+,=-]*$")


def quote(value: str) -> str:
    """A value as .env text: bare when safe, otherwise double-quoted (escapes kept minimal)."""
    if _PLAIN.match(value):
        return value
    if '"' not in value and "\n" not in value:
        return f'"{value}"'
    if "'" not in value and "\n" not in value:
        return f"'{value}'"
    raise click.ClickException("a value with both quote characters or a newline cannot be "
                               "stored in .env; set it in the environment instead")


def set_env_values(path: Path, values: Mapping[str, str]) -> None:
    """Replace ``KEY=...`` lines in place (or append them); every other line is kept as is.
    The file is written atomically with mode 0600 because it holds secrets."""
    if not values:
        return
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        lines = []
    pending = dict(values)
    out = []
    for line in lines:
        match = _KEY.match(line)
        if match and match.group(1) in pending:
            key = match.group(1)
            out.append(f"{key}={quote(pending.pop(key))}")
        else:
            out.append(line)
    out.extend(f"{key}={quote(value)}" for key, value in pending.items())
    private_dir(path.parent)
    write_atomic(path, "\n".join(out) + "\n", mode=0o600)


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

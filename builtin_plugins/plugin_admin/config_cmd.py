"""`hermes config show | get | set | unset | path`."""

from __future__ import annotations

import json
import re
from typing import Any

import click
import yaml
from hermes_agent.api import write_config_value
from hermes_agent import ConfigError, HermesError, hermes_home, load_config
from hermes_agent.api import ListingGroup, cli_kernel, mask_secrets, report_config_warnings

_SECRET = re.compile(r"(^|_)(api_key|key|token|secret|password)$", re.I)


def redact(value: Any, key: str = "") -> Any:
    """Settings with secret names (api_key, token, ...) replaced by ``***``, and the
    credentials inside every URL (``base_url``, proxies) masked, the host kept."""
    if isinstance(value, dict):
        return {k: redact(v, str(k)) for k, v in value.items()}
    if isinstance(value, list):
        return [redact(v, key) for v in value]
    if isinstance(value, str) and value and _SECRET.search(key):
        return "***"
    return mask_secrets(value) if isinstance(value, str) else value


@click.group(cls=ListingGroup, default="show")
def config() -> None:
    """Show, read and change config.yaml."""


@config.command()
def path() -> None:
    """Print the path of config.yaml."""
    click.echo(str(hermes_home() / "config.yaml"))


@config.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option("--show-secrets", is_flag=True,
              help="Do not mask api keys, tokens and passwords in URLs.")
def show(as_json: bool, show_secrets: bool) -> None:
    """Print the effective configuration (defaults merged with config.yaml)."""
    cfg = load_config()
    data = cfg.data if show_secrets else redact(cfg.data)
    for warning in cfg.warnings:
        click.echo(f"warning: {warning}", err=True)
    if as_json:
        click.echo(json.dumps(data, indent=2))
    else:
        click.echo(yaml.safe_dump(data, sort_keys=False, allow_unicode=True).rstrip())


@config.command()
@click.argument("key")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option("--show-secrets", is_flag=True,
              help="Do not mask api keys, tokens and passwords in URLs.")
def get(key: str, as_json: bool, show_secrets: bool) -> None:
    """Print one setting, e.g. `hermes config get memory.provider`."""
    cfg = load_config()
    report_config_warnings(cfg)
    missing = object()
    value = cfg.get(key, missing)
    if value is missing:
        raise click.ClickException(f"no setting {key!r} (see `hermes config show`)")
    if not show_secrets:
        value = redact(value, key.rsplit(".", 1)[-1])
    if as_json:
        click.echo(json.dumps(value))
    elif isinstance(value, (dict, list)):
        click.echo(yaml.safe_dump(value, sort_keys=False).rstrip())
    else:
        click.echo("" if value is None else str(value).lower() if isinstance(value, bool) else value)


@config.command(name="set")
@click.argument("key")
@click.argument("value")
@click.option("--force", is_flag=True, help="Save a key this version does not know.")
def set_value(key: str, value: str, force: bool) -> None:
    """Set one setting; VALUE is read as YAML (`true`, `3`, `[a, b]`, text)."""
    try:
        parsed = yaml.safe_load(value) if value.strip() else ""
    except yaml.YAMLError:
        parsed = value
    home = hermes_home()
    _check_toolsets(key, parsed)
    try:
        write_config_value(home, key, parsed, allow_unknown=force)
    except ConfigError as exc:
        raise click.ClickException(f"not saved; {exc}") from exc
    click.echo(f"{key} = {json.dumps(redact(parsed, key.rsplit('.', 1)[-1]))} (saved to {home / 'config.yaml'})")
    _still_invalid()


def _check_toolsets(key: str, value: Any) -> None:
    """``toolsets`` / ``platform_toolsets.<platform>``: names the loaded plugins register
    (MCP servers' included), else not saved; a warning when the plugins cannot be loaded."""
    if not (key == "toolsets" or key.startswith("platform_toolsets.")) or not (
            isinstance(value, list) and all(isinstance(v, str) for v in value)):
        return  # not a toolset list: the type check of the write says what is wrong
    try:
        problem = cli_kernel().tools.unknown_toolsets(value)
    except HermesError as exc:
        click.echo(f"warning: the toolset names were not checked: the plugins could not be "
                   f"loaded ({exc})", err=True)
        return
    if problem:
        raise click.ClickException(f"not saved; {key}: {problem}")


def _still_invalid() -> None:
    """After a write: name the problems the file still has (invalid values, misspelt keys)."""
    try:
        report_config_warnings(load_config())
    except ConfigError as exc:
        click.echo(f"warning: {exc}", err=True)


@config.command()
@click.argument("key")
def unset(key: str) -> None:
    """Remove one setting from config.yaml (its default applies again)."""
    home = hermes_home()
    if write_config_value(home, key, None, unset=True):
        click.echo(f"{key} removed from {home / 'config.yaml'}")
        _still_invalid()
    else:
        click.echo(f"{key} is not set in {home / 'config.yaml'}; nothing changed")

"""`hermes config show | get | set | unset | path | edit`. A KEY spelled like an environment
variable (``OPENROUTER_API_KEY``) is read from and written to $HERMES_HOME/.env (0600), where
hermes and its plugins read keys; every other KEY is a dotted config.yaml setting."""

from __future__ import annotations

import json
import os
from typing import Any

import click
import yaml
from hermes_agent import ConfigError, HermesError, hermes_home, load_config, write_config_value
from hermes_agent.kits.secret_text import is_secret_name
from hermes_agent.kits.secrets import mask_secrets
from hermes_agent.kits.files import set_env_values, unset_env_values
from hermes_agent.kits.cli import ListingGroup, cli_kernel, report_config_warnings

from .envfile import ENV_NAME, declared_env


def redact(value: Any, key: str = "") -> Any:
    """Settings with secret names (api_key, token, Authorization, ...) replaced by ``***``,
    and the credentials inside every URL (``base_url``, proxies) masked, the host kept."""
    if isinstance(value, dict):
        return {k: redact(v, str(k)) for k, v in value.items()}
    if isinstance(value, list):
        return [redact(v, key) for v in value]
    if isinstance(value, str) and value and is_secret_name(key):
        return "***"
    return mask_secrets(value) if isinstance(value, str) else value


def _env_secret(name: str) -> bool | None:
    """Whether the variable ``name`` holds a secret (declared so by a plugin, or named like a
    credential: ``*_API_KEY``, ``*_TOKEN``, ``*_SECRET``...); None when nothing declares it
    and its name says nothing."""
    declared = declared_env(cli_kernel(boot=False))
    if name in declared:
        return declared[name] or is_secret_name(name)
    return True if is_secret_name(name) else None


def _set_env(name: str, value: str, forced: bool) -> None:
    env_file = hermes_home() / ".env"
    if not ENV_NAME.match(name):
        raise click.ClickException(f"not saved; {name!r} is not an environment variable name "
                                   "(upper-case letters, digits and _, e.g. OPENROUTER_API_KEY)")
    kernel = cli_kernel(boot=False)  # it has read .env (and exported it to this process)
    secret = _env_secret(name)
    if secret is None and not forced:
        raise click.ClickException(
            f"not saved; {name} is not a config.yaml setting (those are lower case, e.g. "
            f"model.default) and no plugin declares it as an environment variable. To keep it "
            f"in {env_file} anyway, run `hermes config set --env {name} VALUE`")
    try:
        set_env_values(env_file, {name: value})
    except ConfigError as exc:
        raise click.ClickException(f"not saved; {exc}") from exc
    shown = "the value is not shown" if secret else f"= {value}"
    click.echo(f"{name} saved to {env_file} (mode 0600; {shown})")
    if name in kernel.dotenv_names:
        os.environ[name] = value  # what this process took from .env, it takes anew
    elif os.environ.get(name, value) != value:
        click.echo(f"warning: {name} is also set in your environment, which takes precedence "
                   f"over {env_file}; unset it there (or restart the shell) to use the new "
                   "value", err=True)


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
    """Print one setting, e.g. `hermes config get memory.provider`. A variable such as
    OPENROUTER_API_KEY is read from .env or the environment (secrets masked)."""
    if ENV_NAME.match(key):
        value = cli_kernel(boot=False).env.get(key)
        if value is None:
            raise click.ClickException(f"{key} is not set (in {hermes_home() / '.env'} or the "
                                       f"environment); set it with `hermes config set {key} "
                                       "VALUE`")
        shown = value if show_secrets or not _env_secret(key) else "***"
        click.echo(json.dumps(shown) if as_json else shown)
        return
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
@click.option("--env", "to_env", is_flag=True,
              help="Save KEY in $HERMES_HOME/.env even if no plugin declares it.")
def set_value(key: str, value: str, force: bool, to_env: bool) -> None:
    """Set one setting; VALUE is read as YAML (`true`, `3`, `[a, b]`, text). A variable such
    as OPENROUTER_API_KEY goes to $HERMES_HOME/.env (mode 0600), not config.yaml."""
    if to_env or ENV_NAME.match(key):
        _set_env(key, value, to_env)
        return
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
    """Remove one setting from config.yaml (its default applies again). A variable such as
    OPENROUTER_API_KEY is removed from $HERMES_HOME/.env."""
    home = hermes_home()
    if ENV_NAME.match(key):
        removed = unset_env_values(home / ".env", [key])
        click.echo(f"{key} removed from {home / '.env'}" if removed
                   else f"{key} is not set in {home / '.env'}; nothing changed")
        return
    if write_config_value(home, key, None, unset=True):
        click.echo(f"{key} removed from {home / 'config.yaml'}")
        _still_invalid()
    else:
        click.echo(f"{key} is not set in {home / 'config.yaml'}; nothing changed")


@config.command()
def edit() -> None:
    """Open config.yaml in $VISUAL/$EDITOR (created if missing); it is checked when the
    editor exits, and kept as written."""
    from .config_edit import run_edit

    run_edit(hermes_home())

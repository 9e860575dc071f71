"""`hermes memory setup [NAME] [--set KEY=VALUE ...]`: select the external memory provider and
store its settings. Secrets (a field with ``secret: true``) go to $HERMES_HOME/.env under the
field's ``env_var``; other settings go to the provider's ``save_config`` or, without one, to
``plugins.entries.<plugin>`` in config.yaml. At a terminal, missing fields are asked for;
elsewhere a missing required field is an error naming the ``--set`` to add."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import click
from hermes_agent import HermesError, write_config_value
from hermes_agent.kits.files import set_env_values
from hermes_agent.kits.cli import cli_kernel, reload_cli_kernel

from .providers import memory_providers

if TYPE_CHECKING:
    from hermes_agent import Kernel


def _interactive() -> bool:
    return sys.stdin.isatty()


def _parse_pairs(pairs: tuple[str, ...]) -> dict[str, str]:
    values = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(f"{pair!r} is not KEY=VALUE", param_hint="--set")
        values[key.strip()] = value
    return values


def _choose(kernel: Kernel) -> str:
    names = sorted(memory_providers(kernel))
    if not names:
        raise HermesError("no memory provider is installed; install one (`hermes plugins "
                          "install ...`) or put a provider folder in "
                          f"{kernel.home / 'plugins'}")
    if not _interactive():
        raise HermesError(f"name the provider: `hermes memory setup NAME` (installed: "
                          f"{', '.join(names)})")
    for number, name in enumerate(names, start=1):
        click.echo(f"  {number}. {name}")
    picked = click.prompt("Memory provider", type=click.IntRange(1, len(names)))
    return names[picked - 1]


def _missing_env(kernel: Kernel, status: Any, given: dict[str, str]) -> None:
    """Ask for (or take from --set) the env vars the plugin needs before it can even load."""
    manifest = status.record.manifest
    needed = [r for r in (manifest.requires_env if manifest else ()) if not kernel.env.get(r.name)]
    values = {}
    for req in needed:
        if req.name in given:
            values[req.name] = given.pop(req.name)
        elif _interactive():
            values[req.name] = click.prompt(req.description or req.name, hide_input=req.secret)
        else:
            raise HermesError(f"{status.name} needs {req.name}: add --set {req.name}=... or put "
                              f"it in {kernel.home / '.env'}")
    if values:
        set_env_values(kernel.home / ".env", values)


def _fields(provider: Any) -> list[dict[str, Any]]:
    schema = getattr(provider, "get_config_schema", None)
    fields = schema() if callable(schema) else []
    return [f for f in fields or [] if isinstance(f, dict) and f.get("key")]


def _collect(fields: list[dict[str, Any]], given: dict[str, str], env: Any
             ) -> tuple[dict[str, str], dict[str, str]]:
    """``(settings, secrets by env var)`` from --set, the terminal or the defaults."""
    settings, secrets, missing = {}, {}, []
    for field in fields:
        key, env_var = str(field["key"]), str(field.get("env_var") or "")
        secret = bool(field.get("secret"))
        value = given.pop(key, given.pop(env_var, None) if env_var else None)
        if value is None and secret and env_var and env.get(env_var):
            continue  # already in the environment or .env
        if value is None and _interactive():
            hint = f" ({field['url']})" if field.get("url") else ""
            choices = field.get("choices")
            value = click.prompt(f"{field.get('description') or key}{hint}",
                                 default=field.get("default"), hide_input=secret,
                                 type=click.Choice([str(c) for c in choices]) if choices else str,
                                 show_default=not secret)
        if value is None:  # not given: a default needs no writing; a required field does
            if field.get("required") and field.get("default") is None:
                missing.append(env_var if secret and env_var else key)
            continue
        if secret:
            secrets[env_var or f"{key.upper()}"] = str(value)
        else:
            settings[key] = str(value)
    if missing:
        raise HermesError("missing settings: " + ", ".join(missing) + "; add "
                          + " ".join(f"--set {m}=..." for m in missing))
    return settings, secrets


def _overrides(provider: Any, method: str) -> bool:
    """Whether ``method`` is the provider's own, not the base class's empty default."""
    from hermes_agent.api import MemoryProvider

    return getattr(type(provider), method, None) is not getattr(MemoryProvider, method)


def run_setup(name: str | None, pairs: tuple[str, ...]) -> None:
    given = _parse_pairs(pairs)
    kernel = cli_kernel()
    name = name or _choose(kernel)
    status = memory_providers(kernel).get(name)
    if status is None:
        installed = ", ".join(sorted(memory_providers(kernel))) or "none"
        raise HermesError(f"no memory provider named {name!r} is installed (installed: "
                          f"{installed})")
    if status.state == "failed":
        raise HermesError(f"memory provider {name!r} cannot load: {status.reason}")
    _missing_env(kernel, status, given)
    write_config_value(kernel.home, "memory.provider", name)
    kernel = reload_cli_kernel()
    try:
        provider = kernel.slots.get("memory", name)
    except Exception as exc:
        reason = kernel.plugins[status.name].reason if status.name in kernel.plugins else ""
        raise HermesError(f"memory.provider is now {name!r} but it did not load: "
                          f"{reason or exc}") from exc
    settings, secrets = _collect(_fields(provider), given, kernel.env)
    if given:
        raise HermesError(f"{name} has no setting named {', '.join(sorted(given))}")
    if secrets:
        set_env_values(kernel.home / ".env", secrets)
    saver = getattr(provider, "save_config", None)
    if settings and callable(saver) and _overrides(provider, "save_config"):
        saver(settings, str(kernel.home))
    else:
        for key, value in settings.items():
            write_config_value(kernel.home, f"plugins.entries.{status.name}.{key}", value)
    kernel = reload_cli_kernel()
    provider = kernel.slots.get("memory", name)
    available = provider.is_available()
    stored = [*(f"{k} (.env)" for k in secrets), *(f"{k}" for k in settings)]
    click.echo(f"Memory provider: {name}" + (f"; saved {', '.join(stored)}" if stored else ""))
    click.echo("It is available: new sessions use it." if available else
               "It reports it is not available (is_available() is false): check its settings; "
               "`hermes memory status` shows more.")

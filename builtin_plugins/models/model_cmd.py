"""``hermes model``: show the active provider and model, list the known providers and which
have keys, and switch (interactively with ``--choose``, or with flags for scripts)."""

from __future__ import annotations

import json
from typing import Any

import click

from hermes_agent import HermesError, mask_url, runtime_kernel, write_config_value

from .errors import ProviderError
from .resolve import find_profile, installed_profiles, key_from_env, resolve_provider
from .types import ProviderProfile


def key_status(profile: ProviderProfile, env: Any) -> str:
    if key_from_env(profile, env):
        return "key set"
    if not profile.key_required:
        return "no key needed"
    return f"missing {' or '.join(profile.key_env)}" if profile.key_env else "missing key"


def describe_active(kernel: Any) -> str:
    """A few lines naming the active provider, or the no-provider message."""
    try:
        runtime = resolve_provider(kernel)
    except HermesError as exc:  # nothing configured, or configured but unusable: say why
        return str(exc)
    info = runtime.describe()
    return "\n".join([
        f"Provider: {runtime.profile.title} ({runtime.name}, {runtime.api_mode})",
        f"Model:    {runtime.model}",
        f"Base URL: {info['base_url']}",
        f"API key:  {info['api_key']}",
        f"Chosen by: {runtime.source}"])


def profile_named(kernel: Any, name: str) -> ProviderProfile:
    """The installed profile called ``name`` (or aliased so); a CLI error listing the others."""
    try:
        return find_profile(kernel, name)
    except ProviderError as exc:
        raise click.ClickException(str(exc)) from None


def switch(kernel: Any, provider: str, model: str | None, base_url: str | None) -> ProviderProfile:
    """Write ``model.provider`` / ``model.default`` (and ``model.base_url``) to config.yaml."""
    profile = profile_named(kernel, provider)
    home = kernel.home
    current = kernel.config.get("model")
    if isinstance(current, str):  # `model: <id>`: becomes the mapping form
        write_config_value(home, "model", {"default": current})
        current = {"default": current}
    previous = (current or {}).get("provider", "")
    write_config_value(home, "model.provider", profile.name)
    chosen_model = model or ((current or {}).get("default") if previous == profile.name else "") \
        or profile.default_model
    if chosen_model:
        write_config_value(home, "model.default", chosen_model)
    else:
        write_config_value(home, "model.default", None, unset=True)
    if base_url:
        write_config_value(home, "model.base_url", base_url)
    elif previous != profile.name:
        write_config_value(home, "model.base_url", None, unset=True)
        write_config_value(home, "model.api_key", None, unset=True)
    return profile


def provider_rows(kernel: Any) -> list[dict[str, Any]]:
    rows = []
    for name, profile in sorted(installed_profiles(kernel).items()):
        rows.append({"name": name, "label": profile.title, "api_mode": profile.api_mode,
                     "key": key_status(profile, kernel.env), "key_env": list(profile.key_env),
                     "default_model": profile.default_model, "base_url": mask_url(profile.base_url),
                     "local": profile.local})
    return rows


@click.command("model")
@click.option("--list", "list_", is_flag=True, help="List known providers and which have keys.")
@click.option("--provider", "-p", help="Switch to this provider (writes config.yaml).")
@click.option("--model", "-m", "model", help="Switch to this model id.")
@click.option("--base-url", help="Endpoint for custom/local providers.")
@click.option("--choose", "-c", is_flag=True, help="Pick the provider and model interactively.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def model(list_: bool, provider: str | None, model: str | None, base_url: str | None,
          choose: bool, as_json: bool) -> None:
    """Show the active model provider and model, list providers, or switch."""
    kernel = runtime_kernel()
    if list_:
        rows = provider_rows(kernel)
        if as_json:
            click.echo(json.dumps(rows, indent=2))
            return
        for row in rows:
            click.echo(f"{row['name']:<14} {row['label']:<24} {row['api_mode']:<19} "
                       f"{row['key']:<32} {row['default_model']}")
        return
    if choose:
        provider, model = choose_interactively(kernel)
    if provider or model or base_url:
        if not provider:
            provider = kernel.config.get("model.provider") or ""
            if not provider:
                raise click.ClickException("no provider configured yet; pass --provider NAME")
        profile = switch(kernel, provider, model, base_url)
        from hermes_agent import Kernel

        fresh = Kernel(kernel.home).boot()
        try:
            click.echo(f"Switched to {profile.title} ({profile.name}).")
            click.echo(describe_active(fresh))
        finally:
            fresh.close()
        return
    if as_json:
        try:
            click.echo(json.dumps(resolve_provider(kernel).describe(), indent=2))
        except HermesError as exc:
            click.echo(json.dumps({"error": str(exc)}, indent=2))
        return
    click.echo(describe_active(kernel))


def choose_interactively(kernel: Any) -> tuple[str, str]:
    rows = provider_rows(kernel)
    for number, row in enumerate(rows, 1):
        click.echo(f"  {number:>2}. {row['label']:<24} ({row['name']}, {row['key']})")
    current = kernel.config.get("model.provider") or "openrouter"
    default = next((i for i, r in enumerate(rows, 1) if r["name"] == current), 1)
    number = click.prompt("Provider", type=click.IntRange(1, len(rows)), default=default)
    profile = installed_profiles(kernel)[rows[number - 1]["name"]]
    chosen = click.prompt("Model", default=profile.default_model or "", show_default=True)
    return profile.name, chosen

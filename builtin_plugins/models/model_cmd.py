"""``hermes model``: show the active provider and model, list the known providers and which
have keys, and switch (interactively with ``--choose``, or with flags for scripts)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import click
from hermes_agent.api import ProviderError, ProviderProfile
from hermes_agent import HermesError, write_config_value
from hermes_agent.kits.secrets import mask_url
from hermes_agent.kits.text import table
from hermes_agent.kits.cli import cli_kernel

from .resolve import (
    endpoint_for,
    find_profile,
    installed_profiles,
    key_from_env,
    probe_local,
    resolve_provider,
)

if TYPE_CHECKING:
    from hermes_agent import Kernel


def key_status(profile: ProviderProfile, env: Any) -> str:
    if key_from_env(profile, env):
        return "key set"
    if not profile.key_required:
        return "no key needed"
    return f"missing {' or '.join(profile.key_env)}" if profile.key_env else "missing key"


def describe_active(kernel: Kernel) -> str:
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


def profile_named(kernel: Kernel, name: str) -> ProviderProfile:
    """The installed profile called ``name`` (or aliased so); a CLI error listing the others."""
    try:
        return find_profile(kernel, name)
    except ProviderError as exc:
        raise click.ClickException(str(exc)) from None


LOCAL_PROBE_TIMEOUT = 3.0


def check_local(kernel: Kernel, profile: ProviderProfile, model: str | None,
                base_url: str | None) -> str | None:
    """For a local server: make sure something answers at its endpoint before anything is
    written (a CLI error naming the endpoint otherwise); returns the model to use when none
    was given and the server lists some."""
    configured = kernel.config.get("model")
    same = isinstance(configured, dict) and configured.get("provider") == profile.name
    url = endpoint_for(profile, kernel.env, base_url or (configured.get("base_url") or ""
                                                         if same else ""))
    served = probe_local(url, timeout=LOCAL_PROBE_TIMEOUT)
    if served is None:
        hint = f" Start it ({LOCAL_START[profile.name]})" if profile.name in LOCAL_START \
            else " Start the server"
        raise click.ClickException(
            f"nothing answers at {mask_url(url)} ({profile.title}), so the model setting was not "
            f"changed.{hint}, or pass --base-url http://HOST:PORT/v1 if it listens elsewhere"
            f"{' (or set ' + profile.base_url_env + ')' if profile.base_url_env else ''}.")
    if model or (same and configured.get("default")):
        return None
    if not served:
        raise click.ClickException(
            f"{profile.title} at {mask_url(url)} serves no model yet, so the model setting was "
            f"not changed: load or pull one first, or pass --model ID.")
    return served[0]


LOCAL_START = {"ollama": "`ollama serve`; models with `ollama pull NAME`",
               "lmstudio": "LM Studio's Developer tab, or `lms server start`"}


def switch(kernel: Kernel, provider: str, model: str | None, base_url: str | None) -> ProviderProfile:
    """Write ``model.provider`` / ``model.default`` (and ``model.base_url``) to config.yaml.
    A local server is asked first; nothing is written when it does not answer."""
    profile = profile_named(kernel, provider)
    if profile.local:
        model = model or check_local(kernel, profile, model, base_url)
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


def active_name(kernel: Kernel) -> str:
    """The provider calls would use now ("" when none resolves; no local server is probed)."""
    try:
        return resolve_provider(kernel, probe=False).name
    except HermesError:
        return ""


def provider_rows(kernel: Kernel) -> list[dict[str, Any]]:
    rows = []
    active = active_name(kernel)
    for name, profile in sorted(installed_profiles(kernel).items()):
        rows.append({"name": name, "label": profile.title, "api_mode": profile.api_mode,
                     "key": key_status(profile, kernel.env), "key_env": list(profile.key_env),
                     "default_model": profile.default_model, "base_url": mask_url(profile.base_url),
                     "local": profile.local, "active": name == active})
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
    kernel = cli_kernel()
    if list_:
        rows = provider_rows(kernel)
        if as_json:
            click.echo(json.dumps(rows, indent=2))
            return
        table_rows = [(r["name"], r["label"], r["api_mode"], r["key"], r["default_model"] or "-",
                       "← active" if r["active"] else "") for r in rows]
        for line in table(("PROVIDER", "NAME", "API", "KEY", "DEFAULT MODEL", ""), table_rows):
            click.echo(line.rstrip())
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


def choose_interactively(kernel: Kernel) -> tuple[str, str]:
    name = choose_provider(kernel, "Which model provider?")
    profile = installed_profiles(kernel)[name]
    current = kernel.config.get("model.default") if name == kernel.config.get("model.provider") \
        else ""
    chosen = click.prompt("Model", default=current or profile.default_model or "",
                          show_default=True)
    return profile.name, chosen


def choose_provider(kernel: Kernel, question: str) -> str:
    """Ask for a provider by number; the one configured now is the default."""
    rows = provider_rows(kernel)
    click.echo(question)
    numbered = [(f"{n}.", r["label"], r["name"], r["key"]) for n, r in enumerate(rows, 1)]
    for line in table(("", "PROVIDER", "NAME", "KEY"), numbered, indent="  "):
        click.echo(line)
    current = kernel.config.get("model.provider") or "openrouter"
    default = next((i for i, r in enumerate(rows, 1) if r["name"] == current), 1)
    names = {r["name"]: r["name"] for r in rows}
    for profile in installed_profiles(kernel).values():
        names.update({alias: profile.name for alias in profile.aliases})

    def parse(text: Any) -> str:
        value = str(text).strip()
        if value.isdigit() and 1 <= int(value) <= len(rows):
            return rows[int(value) - 1]["name"]
        if value.lower() in names:
            return names[value.lower()]
        raise click.UsageError(f"enter a number between 1 and {len(rows)}, or a provider name")

    return click.prompt("Provider (number or name)", default=default, value_proc=parse)


def ask_number(label: str, count: int, default: int | None = None) -> int:
    """A number from 1 to ``count``, asked again (saying so) until one is given."""
    def parse(text: Any) -> int:
        value = str(text).strip()
        if not value.isdigit() or not 1 <= int(value) <= count:
            raise click.UsageError(f"enter a number between 1 and {count}")
        return int(value)

    return click.prompt(label, default=default, value_proc=parse)


def choose_model(served: list[str], default: str, limit: int = 30) -> str:
    """Pick one of the models a server reports, by number, or type any model id."""
    for number, model_id in enumerate(served[:limit], 1):
        click.echo(f"  {number:>2}. {model_id}")
    if len(served) > limit:
        click.echo(f"  ... and {len(served) - limit} more (type an id)")
    shown = min(len(served), limit)

    def parse(text: Any) -> str:
        value = str(text).strip()
        if value.isdigit():
            if not 1 <= int(value) <= shown:
                raise click.UsageError(f"enter a number between 1 and {shown}, or a model id")
            return served[int(value) - 1]
        if not value:
            raise click.UsageError("enter a number or a model id")
        return value

    return click.prompt("Model (number or id)", default=default or served[0], value_proc=parse)

"""``hermes setup``: the first-run wizard. Provider, API key (stored in ``$HERMES_HOME/.env``
with mode 0600, other lines kept), model, then a test call. Every question has a flag, so it
runs unattended: ``hermes setup --provider openrouter --api-key sk-... --model x --yes``.
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING, Any

import click
from hermes_agent import HermesError
from hermes_agent.kits.cli import cli_kernel

from .model_cmd import choose_model, choose_provider, profile_named, switch
from .resolve import endpoint_for, key_from_env, probe_local

if TYPE_CHECKING:
    from hermes_agent import Kernel

TEST_PROMPT = "Reply with the single word: ready"


def _pick_model(kernel: Kernel, profile: Any, base_url: str | None, yes: bool) -> str:
    """The model to use: the one configured for this provider, else its default, else the
    first one served; a person picks from the models the server reports at /models."""
    current = kernel.config.get("model.default") \
        if kernel.config.get("model.provider") == profile.name else ""
    suggested = current or profile.default_model
    endpoint = endpoint_for(profile, {**kernel.env, **os.environ}, base_url or "")
    served: list[str] = []
    if endpoint and (not yes or not suggested):
        key = key_from_env(profile, {**kernel.env, **os.environ}) if profile.key_env else None
        served = probe_local(endpoint, timeout=5.0, api_key=key) or []
    if yes:
        return suggested or (served[0] if served else "")
    if served:
        click.echo(f"Models at {endpoint}:")
        return choose_model(served, suggested)
    return click.prompt("Model", default=suggested or None)


def test_call(kernel: Kernel) -> tuple[bool, str]:
    """One tiny request through the configured provider: (ok, what to print)."""
    from hermes_agent.api import CallContext, ChatRequest

    from .client import ModelClient
    from .retry import RetryPolicy

    started = time.perf_counter()
    try:
        client = ModelClient.from_config(kernel, retry=RetryPolicy(max_retries=1, base_delay=1.0))
        response = client.chat(ChatRequest([{"role": "user", "content": TEST_PROMPT}],
                                           max_tokens=16, stream=False, timeout=60),
                               context=CallContext(platform="cli", task="setup_test", on_retry=lambda
                                                   notice: click.echo(notice.text(), err=True)))
    except HermesError as exc:
        return False, f"Test call failed: {exc}"
    elapsed = (time.perf_counter() - started) * 1000
    reply = (response.content or "").strip().replace("\n", " ")[:60]
    return True, f"Test call OK ({response.provider} {response.model}, {elapsed:.0f} ms): {reply!r}"


@click.command("setup")
@click.option("--provider", "-p", help="Provider name (see `hermes model --list`).")
@click.option("--api-key", help="API key to store in $HERMES_HOME/.env.")
@click.option("--model", "-m", "model", help="Model id (default: the provider's default).")
@click.option("--base-url", help="Endpoint, for custom and local providers.")
@click.option("--no-test", is_flag=True, help="Skip the test call.")
@click.option("--yes", "-y", is_flag=True, help="Accept defaults instead of asking.")
def setup(provider: str | None, api_key: str | None, model: str | None, base_url: str | None,
          no_test: bool, yes: bool) -> None:
    """First-run wizard: choose a provider, store its key, pick a model, test it."""
    from hermes_agent import Kernel
    from hermes_agent.kits.files import set_env_values

    kernel = cli_kernel()
    if not provider:
        if yes:
            raise click.ClickException("--yes needs --provider NAME (see `hermes model --list`)")
        provider = choose_provider(kernel, "Which model provider should hermes use?")
    profile = profile_named(kernel, provider)
    env_file = kernel.home / ".env"
    if profile.key_env and (profile.key_required or api_key):
        existing = key_from_env(profile, kernel.env)
        if not api_key and not yes and not (existing and click.confirm(
                f"{profile.key_env[0]} is already set; keep it?", default=True)):
            hint = f" (get one at {profile.key_url})" if profile.key_url else ""
            api_key = click.prompt(f"{profile.title} API key{hint}", hide_input=True,
                                   default="", show_default=False) or None
        if api_key:
            set_env_values(env_file, {profile.key_env[0]: api_key.strip()})
            os.environ[profile.key_env[0]] = api_key.strip()  # this process sees the new key
            click.echo(f"Stored {profile.key_env[0]} in {env_file} (mode 0600).")
        elif not existing and profile.key_required:
            raise click.ClickException(f"{profile.title} needs an API key: pass --api-key or set "
                                       f"{profile.key_env[0]} in {env_file}")
    if profile.name == "custom" and not base_url and not yes:
        current = kernel.config.get("model.base_url") \
            if kernel.config.get("model.provider") == profile.name else ""
        base_url = click.prompt("Base URL (OpenAI-compatible, e.g. http://127.0.0.1:8000/v1)",
                                default=current or None)
    if not model:
        model = _pick_model(kernel, profile, base_url, yes)
    switch(kernel, profile.name, model, base_url)
    click.echo(f"Configured {profile.title} with model {model} in {kernel.home / 'config.yaml'}.")
    if no_test:
        return
    fresh = Kernel(kernel.home).boot()
    try:
        ok, message = test_call(fresh)
    finally:
        fresh.close()
    click.echo(message)
    if not ok:
        raise click.exceptions.Exit(1)

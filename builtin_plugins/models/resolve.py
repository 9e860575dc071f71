"""Which provider, model, endpoint and key a call uses.

Order for each setting: an explicit choice (CLI flag or runtime argument), then config.yaml
``model.*``, then environment variables, then the provider profile's defaults. With no
provider named anywhere, the first provider whose key is in the environment is used, then a
local OpenAI-compatible server that answers on its default port (Ollama 11434, LM Studio
1234); otherwise :class:`NoProviderError` says exactly how to configure one.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from hermes_agent.api import NoProviderError, ProviderError, ProviderProfile

from .runtime import DEFAULT_TIMEOUT, RuntimeProvider

if TYPE_CHECKING:
    from hermes_agent import Kernel

# Order in which providers are picked automatically when only their key is set.
AUTO_ORDER = ("openrouter", "nous", "anthropic", "openai", "gemini", "deepseek")
# Local servers probed on their default port when nothing is configured (other local
# profiles, such as vllm and llamacpp, are used when chosen by name).
LOCAL_PROBES = ("ollama", "lmstudio")
PROBE_TIMEOUT = 0.4

NO_PROVIDER_MESSAGE = """No model provider is configured.
Fix it in one of these ways:
  - run `hermes setup` (asks for a provider, stores its key in {home}/.env, tests it);
  - or choose one yourself: `hermes model --provider openrouter --model anthropic/claude-sonnet-4`
    and put the key in {home}/.env (e.g. OPENROUTER_API_KEY=...);
  - or start a local server: Ollama (port 11434) or LM Studio (port 1234) is used automatically.
Known providers: {known}."""


def installed_profiles(kernel: Kernel) -> dict[str, ProviderProfile]:
    """Profiles registered by the loaded model-provider plugins, by name."""
    return {name: entry.obj for name, entry in kernel.slots.providers["model_provider"].items()}


def find_profile(kernel: Kernel, name: str) -> ProviderProfile:
    profiles = installed_profiles(kernel)
    if name in profiles:
        return profiles[name]
    for profile in profiles.values():
        if name in profile.aliases:
            return profile
    raise ProviderError(
        f"model provider {name!r} is not installed; installed: {', '.join(sorted(profiles)) or 'none'}. "
        "Choose one with `hermes model --provider NAME`, or install and enable the plugin "
        f"that provides {name!r}.", reason="bad_request", provider=name, retryable=False)


def key_from_env(profile: ProviderProfile, env: Mapping[str, str]) -> str:
    for name in profile.key_env:
        if env.get(name):
            return env[name]
    return ""


def probe_local(base_url: str, timeout: float = PROBE_TIMEOUT,
                api_key: str | None = None) -> list[str] | None:
    """Model ids served at ``base_url``/models, or ``None`` when nothing answers."""
    import urllib.request  # only when probing: a configured provider never needs it

    request = urllib.request.Request(base_url.rstrip("/") + "/models")
    if api_key:
        request.add_header("Authorization", f"Bearer {api_key}")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as resp:
            data = json.loads(resp.read() or b"{}")
    except (OSError, ValueError):
        return None
    return [str(m.get("id")) for m in data.get("data", []) if isinstance(m, dict) and m.get("id")]


def endpoint_for(profile: ProviderProfile, env: Mapping[str, str], base_url: str = "") -> str:
    """Where ``profile`` is reached: ``base_url`` if given, else its variable, else its own."""
    return (base_url or (env.get(profile.base_url_env) if profile.base_url_env else "")
            or profile.base_url)


def _config_model(config: Any) -> dict[str, Any]:
    model = config.get("model") if config is not None else None
    if isinstance(model, str):
        return {"default": model}
    return dict(model or {})


def _env(kernel: Kernel) -> Mapping[str, str]:
    return getattr(kernel, "env", None) or os.environ


def resolve_provider(kernel: Kernel, *, provider: str | None = None, model: str | None = None,
                     base_url: str | None = None, api_key: str | None = None,
                     probe: bool = True, source: str | None = None) -> RuntimeProvider:
    """Resolve the provider for a call of ``kernel``'s configuration."""
    env = _env(kernel)
    cfg = _config_model(kernel.config)
    profiles = installed_profiles(kernel)
    origin = "explicit" if provider else ""
    name = provider or ""
    if not name and cfg.get("provider") and cfg.get("provider") != "auto":
        name, origin = cfg["provider"], "config"
    if not name and env.get("HERMES_INFERENCE_PROVIDER"):
        name, origin = env["HERMES_INFERENCE_PROVIDER"], "env"
    # config base_url / api_key belong to the configured provider only
    same = origin != "explicit" or name == cfg.get("provider")
    cfg_base = cfg.get("base_url") if same else ""
    cfg_key = cfg.get("api_key") if same else ""
    local_models: list[str] | None = None
    if not name and (base_url or cfg_base):
        name, origin = "custom", origin or "config"
    if not name:
        for candidate in sorted(profiles.values(), key=lambda p: (
                AUTO_ORDER.index(p.name) if p.name in AUTO_ORDER else len(AUTO_ORDER), p.name)):
            if candidate.auto_detect and candidate.key_required and key_from_env(candidate, env):
                name, origin = candidate.name, "env"
                break
    if not name and probe:
        for candidate in sorted((p for p in profiles.values() if p.local and p.name in LOCAL_PROBES),
                                key=lambda p: p.name):
            url = env.get(candidate.base_url_env) if candidate.base_url_env else None
            local_models = probe_local(url or candidate.base_url)
            if local_models is not None:
                name, origin = candidate.name, "local"
                break
    if not name:
        raise NoProviderError(NO_PROVIDER_MESSAGE.format(
            home=getattr(kernel, "home", "~/.hermes"), known=", ".join(sorted(profiles)) or "none"))
    profile = find_profile(kernel, name)
    if profile.local and local_models is None and not (model or cfg.get("default") or env.get("HERMES_MODEL")):
        local_models = probe_local(endpoint_for(profile, env, base_url or cfg_base)) \
            if probe else None
    chosen_model = (model or (cfg.get("default") if same else "") or env.get("HERMES_MODEL", "")
                    or profile.default_model or (local_models[0] if local_models else ""))
    if not chosen_model:
        raise ProviderError(
            f"no model chosen for provider {profile.name!r}: set one with "
            f"`hermes model --provider {profile.name} --model MODEL_ID` (model.default in config.yaml)",
            reason="model_not_found", provider=profile.name, retryable=False)
    url = endpoint_for(profile, env, base_url or cfg_base)
    if not url:
        raise ProviderError(
            f"provider {profile.name!r} needs a base_url: `hermes model --provider {profile.name} "
            "--base-url http://HOST:PORT/v1` (model.base_url in config.yaml)",
            reason="bad_request", provider=profile.name, retryable=False)
    key = api_key or cfg_key or key_from_env(profile, env)
    if not key and profile.key_required:
        env_names = " or ".join(profile.key_env) or "model.api_key"
        raise ProviderError(
            f"{profile.title} needs an API key: set {env_names} in {getattr(kernel, 'home', '~/.hermes')}"
            f"/.env (or run `hermes setup`)" + (f"; get a key at {profile.key_url}" if profile.key_url else ""),
            reason="auth", provider=profile.name, model=chosen_model, retryable=False)
    timeout = _float(cfg.get("timeout")) or DEFAULT_TIMEOUT
    return RuntimeProvider(profile, chosen_model, url, key, source or origin, timeout,
                           max_tokens=_max_tokens(cfg.get("max_tokens") if same else None,
                                                  profile))


def resolve_fallbacks(kernel: Kernel) -> list[dict[str, Any]]:
    """``fallback_providers`` entries as dicts (a bare string names a provider)."""
    entries = []
    for entry in (kernel.config.get("fallback_providers") or []):
        if isinstance(entry, str):
            entries.append({"provider": entry})
        elif isinstance(entry, dict) and entry.get("provider"):
            entries.append(entry)
    return entries


def runtime_for_entry(kernel: Kernel, entry: Mapping[str, Any]) -> RuntimeProvider:
    env = _env(kernel)
    key_env = entry.get("key_env") or entry.get("api_key_env")
    key = entry.get("api_key") or (env.get(key_env, "") if key_env else "")
    runtime = resolve_provider(kernel, provider=entry["provider"],
                               model=entry.get("model") or None,
                               base_url=entry.get("base_url") or None, api_key=key or None,
                               probe=False, source="fallback")
    if entry.get("max_tokens") not in (None, ""):
        runtime.max_tokens = _max_tokens(entry["max_tokens"], runtime.profile)
    return runtime


def _max_tokens(configured: Any, profile: ProviderProfile) -> int | None:
    """``model.max_tokens`` (0: send no cap), else the profile's default."""
    if configured in (None, ""):
        return profile.default_max_tokens
    try:
        return int(configured) or None
    except (TypeError, ValueError):
        raise ProviderError(f"model.max_tokens must be a whole number of tokens (or 0 for no "
                            f"cap), not {configured!r}: fix it in config.yaml",
                            reason="bad_request", provider=profile.name, retryable=False) from None


def _float(value: Any) -> float | None:
    try:
        return float(value) if value not in (None, "") else None
    except (TypeError, ValueError):
        return None

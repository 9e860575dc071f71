"""``hermes doctor``'s check of the model providers (``doctor_checks``): the configured
provider and each of ``fallback_providers`` resolve (installed, a model chosen, a base_url,
a key where one is needed), and, unless offline, answer a short HTTP probe of their endpoint
(``GET <base_url>/models``; any HTTP answer is reachable, 401/403 a refused key)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from hermes_agent.api import Finding, NoProviderError, ProviderError
from hermes_agent.kits.secrets import mask_url

if TYPE_CHECKING:
    from hermes_agent import Kernel

    from .runtime import RuntimeProvider

PROBE_TIMEOUT_S = 3.0
OFFLINE_NOTE = "`hermes doctor --offline` skips this probe"


def provider_findings(kernel: "Kernel", offline: bool) -> list[Finding]:
    from .resolve import resolve_fallbacks, resolve_provider, runtime_for_entry

    targets: list[tuple[str, Callable[[], RuntimeProvider]]] = [
        ("model provider", lambda: resolve_provider(kernel, probe=not offline))]
    for index, entry in enumerate(resolve_fallbacks(kernel)):
        targets.append((f"fallback_providers.{index}",
                        lambda entry=entry: runtime_for_entry(kernel, entry)))  # type: ignore[misc]
    out: list[Finding] = []
    for label, make in targets:
        try:
            runtime = make()
        except NoProviderError:
            out.append(Finding(label, "problem", "no model provider is configured, and none "
                               "was found (no key in the environment, no local server)",
                               "run `hermes setup`, or `hermes model --provider NAME --model "
                               f"MODEL` and put its key in {kernel.home / '.env'}"))
            continue
        except ProviderError as exc:
            out.append(_unresolved(kernel, label, exc))
            continue
        out.append(_key_finding(runtime, label))
        if not offline:
            out.append(probe(runtime))
    return out


def _unresolved(kernel: "Kernel", label: str, exc: ProviderError) -> Finding:
    name = exc.provider or "?"
    if exc.reason == "auth":
        from .resolve import find_profile

        profile = find_profile(kernel, name)
        names = " or ".join(profile.key_env) or "model.api_key"
        where = f"; get a key at {profile.key_url}" if profile.key_url else ""
        return Finding(f"key {name}", "problem", f"{label}: {profile.title} needs an API key "
                       f"and {names} is not set",
                       f"add {profile.key_env[0] if profile.key_env else 'KEY'}=... to "
                       f"{kernel.home / '.env'} (or run `hermes setup`){where}")
    return Finding(label, "problem", f"{name}: {exc}",
                   "choose an installed provider and model: `hermes model --provider NAME "
                   "--model MODEL` (`hermes model list` shows them)")


def _key_finding(runtime: "RuntimeProvider", label: str) -> Finding:
    profile = runtime.profile
    if runtime.api_key:
        how = "a key is set"
    elif profile.key_required:  # resolve refuses this; kept for a profile that changes it
        how = "no key"
    else:
        how = "no key needed"
    return Finding(f"key {runtime.name}", "ok", f"{label}: {profile.title}, model "
                   f"{runtime.model}, {how}")


def probe(runtime: "RuntimeProvider", timeout: float = PROBE_TIMEOUT_S) -> Finding:
    """One short request to the provider's endpoint: does anything answer there?"""
    import httpx2

    url = runtime.base_url.rstrip("/") + "/models"
    shown = mask_url(runtime.base_url)
    check = f"provider {runtime.name}"
    headers = dict(runtime.profile.default_headers)
    if runtime.api_key:
        if runtime.api_mode == "anthropic_messages":
            headers.update({"x-api-key": runtime.api_key, "anthropic-version": "2023-06-01"})
        else:
            headers["Authorization"] = f"Bearer {runtime.api_key}"
    started = time.monotonic()
    try:
        response = httpx2.get(url, headers=headers, timeout=timeout, follow_redirects=False)
    except httpx2.TimeoutException:
        return Finding(check, "problem", f"{shown} did not answer within {timeout:.0f} s",
                       _reach_fix(runtime))
    except (httpx2.HTTPError, OSError, ValueError) as exc:
        return Finding(check, "problem", f"cannot reach {shown}: {type(exc).__name__}: "
                       f"{str(exc) or 'no detail'}", _reach_fix(runtime))
    took = (time.monotonic() - started) * 1000
    if response.status_code in (401, 403):
        names = " or ".join(runtime.profile.key_env) or "model.api_key"
        return Finding(check, "problem", f"{shown} refused the key (HTTP "
                       f"{response.status_code})", f"check the key ({names}); make a new one"
                       + (f" at {runtime.profile.key_url}" if runtime.profile.key_url else ""))
    return Finding(check, "ok", f"{shown} answers (HTTP {response.status_code}, {took:.0f} ms)")


def _reach_fix(runtime: "RuntimeProvider") -> str:
    if runtime.profile.local or runtime.name == "custom":
        return (f"start the server at {mask_url(runtime.base_url)}, or point hermes at the "
                "right one: `hermes config set model.base_url http://HOST:PORT/v1`; "
                + OFFLINE_NOTE)
    return ("check the network, a proxy (HTTPS_PROXY) or model.base_url in config.yaml; "
            + OFFLINE_NOTE)

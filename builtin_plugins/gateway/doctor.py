"""``hermes doctor``'s check of the gateway (``doctor_checks``): each enabled platform has
what it needs (its ``check_fn``: libraries, tokens) and a configuration its
``validate_config`` accepts, and its adapter can be built from its settings (tokens,
allow-lists), as ``hermes gateway run`` requires before starting it; and the platforms a
running gateway had to stop. Nothing is connected."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_agent.api import Finding, PlatformConfig

from .platforms import enabled

if TYPE_CHECKING:
    from hermes_agent import Kernel


def platform_findings(kernel: "Kernel") -> list[Finding]:
    out = []
    for name, provider in sorted(kernel.slots.providers["platform"].items()):
        if enabled(kernel, name):
            out.append(_platform(kernel, name, provider.obj))
    out.extend(_stopped(Path(kernel.home)))
    return out


def _platform(kernel: "Kernel", name: str, entry: Any) -> Finding:
    check = f"platform {name}"
    where = f"platforms.{name} in config.yaml and its variables in {kernel.home / '.env'}"
    requirements = getattr(entry, "check_fn", None)
    try:
        if requirements is not None and not requirements():
            hint = getattr(entry, "install_hint", "") or "see the platform plugin's docs"
            return Finding(check, "problem", f"{name} is enabled but its requirements are "
                           "missing, so `hermes gateway run` does not start it", hint)
        validate = getattr(entry, "validate_config", None)
        config = PlatformConfig(kernel.config.get(f"platforms.{name}") or {})
        if validate is not None and validate(config) is False:
            return Finding(check, "problem", f"{name} is enabled but its configuration is "
                           "invalid, so `hermes gateway run` does not start it", f"check {where}")
        if entry.adapter_factory is not None:
            entry.adapter_factory(config)  # reads its settings (tokens, allow-lists); connects not
    except Exception as exc:  # what the platform says is missing; its check must not stop us
        return Finding(check, "problem", f"{name} is enabled but cannot start: {exc}",
                       f"set what it names: {where}")
    return Finding(check, "ok", f"{name} is enabled and configured")


def _stopped(home: Path) -> list[Finding]:
    if not (home / "gateway" / "state.json").exists():  # no gateway ran here (creates nothing)
        return []
    from .state import StateFile

    state = StateFile(home).read() or {}
    return [Finding(f"platform {name}", "problem", f"the running gateway (pid {state.get('pid')}) "
                    f"stopped {name}: {reason}", "fix what the reason names, then restart the "
                    "gateway (stop it, then `hermes gateway run`)")
            for name, reason in sorted((state.get("failed_platforms") or {}).items())]

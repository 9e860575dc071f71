"""Which platform adapters a gateway starts: every platform registered in the ``platform``
slot that is enabled (``platforms.<name>.enabled`` in config.yaml or ``<NAME>_ENABLED`` in the
environment) and whose ``check_fn`` and ``validate_config`` pass."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from hermes_agent.api import PlatformConfig

if TYPE_CHECKING:
    from hermes_agent import Kernel

log = logging.getLogger("hermes_agent.gateway")
TRUE = ("1", "true", "yes", "on")


def enabled(kernel: Kernel, name: str) -> bool:
    section = kernel.config.get(f"platforms.{name}") or {}
    env = kernel.env.get(f"{name.upper().replace('-', '_')}_ENABLED", "")
    flag = section.get("enabled") if isinstance(section, dict) else None
    return bool(flag) if flag is not None else env.lower() in TRUE


def build_adapters(kernel: Kernel) -> tuple[dict[str, Any], dict[str, Any], list[str]]:
    """``(adapters, entries, problems)``: the enabled platforms' adapters and registry
    entries, and why any enabled platform could not be built."""
    adapters: dict[str, Any] = {}
    entries: dict[str, Any] = {}
    problems: list[str] = []
    for name, provider in sorted(kernel.slots.providers["platform"].items()):
        entry = provider.obj
        if not enabled(kernel, name):
            continue
        config = PlatformConfig(kernel.config.get(f"platforms.{name}") or {})
        check = getattr(entry, "check_fn", None)
        if check is not None and not check():
            hint = getattr(entry, "install_hint", "") or "see the platform plugin's docs"
            problems.append(f"{name}: its requirements are missing ({hint})")
            continue
        validate = getattr(entry, "validate_config", None)
        try:
            if validate is not None and validate(config) is False:
                problems.append(f"{name}: its configuration is invalid; check platforms.{name} "
                                "in config.yaml and its environment variables")
                continue
            factory = entry.adapter_factory
            if factory is None:
                problems.append(f"{name}: the plugin registered no adapter_factory")
                continue
            adapters[name] = factory(config)
            entries[name] = entry
        except Exception as exc:
            problems.append(f"{name}: building its adapter failed: {exc}")
    return adapters, entries, problems

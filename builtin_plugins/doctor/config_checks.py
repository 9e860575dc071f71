"""The doctor's checks of config.yaml: invalid settings (then no kernel starts), unknown or
misspelt keys and unset ``${VAR}``s, and slot selections (``sessions.store``,
``memory.provider``, ``web.backend``, ...) that name a provider no loaded plugin offers."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_agent import HermesError
from hermes_agent.api import Finding

if TYPE_CHECKING:
    from hermes_agent import Kernel


def config_findings(config: Any) -> list[Finding]:
    """config.yaml is valid (the kernel started); its warnings: unknown or misspelt keys,
    ``${VAR}``s that are not set."""
    path = config.path
    warnings = list(getattr(config, "startup_warnings", []) or [])
    if not warnings:
        return [Finding("config", "ok", f"{path} is valid")]
    return [Finding("config", "warn", warning.removeprefix(f"{path}: "),
                    f"correct or remove it in {path} (`hermes config edit`; "
                    "`hermes config unset KEY` removes one)") for warning in warnings]


def invalid_config(path: Path | str, problems: list[str], message: str) -> Finding:
    """config.yaml has invalid settings (no kernel could start)."""
    detail = "; ".join(problems) if problems else message
    return Finding("config", "problem", f"{path} has invalid settings: {detail}",
                   f"fix these settings in {path} (`hermes config edit`, or `hermes config "
                   "unset KEY` to go back to the default); the checks that need the plugins "
                   "run once it is valid")


def slot_findings(kernel: "Kernel") -> list[Finding]:
    """Each declared slot's selection names an installed, loaded provider (the kernel's own
    refusal, split into what is wrong and its fix)."""
    out = []
    for slot, info in sorted(kernel.config.slots.items()):
        try:
            kernel.active_provider(slot)
        except HermesError as exc:
            what, _, fix = " ".join(str(exc).split()).partition(". Set ")
            out.append(Finding(info.label or slot, "problem", what, f"set {fix}" if fix else
                               f"hermes config set {info.config_key} NAME (an installed one)"))
    return out

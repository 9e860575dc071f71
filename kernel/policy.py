"""Which discovered plugins load, and why the others do not.

Shared by the runtime and the CLI, so ``hermes plugins list`` reports the same decision the
kernel acts on. States: ``loaded`` and ``failed`` come from an actual load; before loading a
plugin is ``enabled`` or skipped as ``disabled``, ``not enabled``, ``not selected``,
``missing env``, ``incompatible`` or ``failed`` (its manifest or name is unusable).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from shlex import quote

from .config import Config
from .declared import is_essential
from .discovery import PluginRecord
from .slots import ENABLING_KEYS

_TRUTHY = ("1", "true", "yes", "on")
DEFAULT_ON_KINDS = ("backend", "model-provider", "platform")


@dataclass(frozen=True)
class Decision:
    """Whether a plugin loads, its state, and why not."""

    load: bool
    state: str
    reason: str = ""
    code: str = ""  # why it does not load: PluginStatus.code


def truthy(value: str | None) -> bool:
    return (value or "").strip().lower() in _TRUTHY


def load_filter(env: Mapping[str, str]) -> set[str] | None:
    """HERMES_LOAD_PLUGINS: unset -> None (no filter); '' -> none; 'a,b' -> only these."""
    if "HERMES_LOAD_PLUGINS" not in env:
        return None
    return {n.strip() for n in env["HERMES_LOAD_PLUGINS"].split(",") if n.strip()}


def decide(record: PluginRecord, config: Config, env: Mapping[str, str]) -> Decision:
    name = record.name
    if record.error:
        return Decision(False, "failed", record.error, record.error_code)
    builtin = record.source == "builtin"
    if record.matches(config.plugins_disabled):
        if is_essential(record):
            return Decision(True, "enabled", f"'{name}' is essential and cannot be disabled; "
                            "remove it from plugins.disabled")
        return Decision(False, "disabled", "listed in plugins.disabled "
                        f"(run `hermes plugins enable {quote(name)}` to turn it back on)", "disabled")
    if builtin:
        return Decision(True, "enabled")
    if truthy(env.get("HERMES_SAFE_MODE")):
        return Decision(False, "disabled", "safe mode (HERMES_SAFE_MODE) loads builtin plugins only",
                        "safe_mode")
    only = load_filter(env)
    forced = only is not None and record.matches(only)
    if only is not None and not forced:
        return Decision(False, "disabled", "not listed in HERMES_LOAD_PLUGINS", "load_filter")
    if not forced:
        if record.kind == "exclusive":
            slot = record.slot or "memory"
            key = ENABLING_KEYS.get(slot, ENABLING_KEYS["memory"])
            selected = config.get(key) or ""
            if selected not in (name, *record.aliases) and not record.matches(config.plugins_enabled):
                return Decision(False, "not selected",
                                f"an exclusive provider loads when selected: "
                                f"`hermes config set {key} {quote(name)}`", "not_selected")
        elif not (record.source == "bundled" and record.kind in DEFAULT_ON_KINDS):
            if not record.matches(config.plugins_enabled) and not selected_by_slot(record, config):
                return Decision(False, "not enabled",
                                f"not in plugins.enabled (run `hermes plugins enable {quote(name)}`)",
                                "not_enabled")
    missing = missing_env(record, env)
    if missing:
        return Decision(False, "missing env",
                        f"Plugin {name} disabled (missing: {', '.join(missing)}); set "
                        f"{'it' if len(missing) == 1 else 'them'} in the environment or in "
                        f"{config.home / '.env'}", "missing_env")
    return Decision(True, "enabled")


def selected_by_slot(record: PluginRecord, config: Config) -> bool:
    """Naming a plugin in memory.provider or context.engine enables it, whatever its kind."""
    names = (record.name, *record.aliases)
    return any(config.get(key) in names for key in ENABLING_KEYS.values())


def missing_env(record: PluginRecord, env: Mapping[str, str]) -> list[str]:
    if record.manifest is None:
        return []
    return [req.name for req in record.manifest.requires_env if not env.get(req.name)]

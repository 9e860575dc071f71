"""Which discovered plugins load, why the others do not, and in what order.

``hermes plugins list`` reports the same :func:`decide` the kernel acts on. Plugins shipped
with hermes load first; installed ones earliest-installed first (the install times come from
the ``plugin_install_times`` service, see :func:`by_install_time`), so a name two plugins
claim stays with the one that had it first.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from shlex import quote

from .config import Config
from .discovery import PluginRecord
from .slots import enabling_keys
from .trust import is_trusted

DEFAULT_ON_KINDS = ("backend", "model-provider", "platform")
SHIPPED = ("builtin", "bundled")  # installed together with hermes itself


@dataclass(frozen=True)
class Decision:
    """Whether a plugin loads, its state (enabled, disabled, not enabled, not selected,
    missing env, failed), and why not (``code``: ``PluginStatus.code``)."""

    load: bool
    state: str
    reason: str = ""
    code: str = ""


def truthy(value: str | None) -> bool:
    return (value or "").strip().lower() in ("1", "true", "yes", "on")


def load_filter(env: Mapping[str, str]) -> set[str] | None:
    """HERMES_LOAD_PLUGINS: unset -> None (no filter); '' -> none; 'a,b' -> only these."""
    if "HERMES_LOAD_PLUGINS" not in env:
        return None
    return {n.strip() for n in env["HERMES_LOAD_PLUGINS"].split(",") if n.strip()}


def is_essential(record: PluginRecord) -> bool:
    """Whether ``record`` is a builtin plugin that cannot be disabled."""
    return record.source == "builtin" and bool(record.manifest and record.manifest.essential)


def decide(record: PluginRecord, config: Config, env: Mapping[str, str]) -> Decision:
    name = record.name
    if record.error:
        return Decision(False, "failed", record.error, record.error_code)
    if record.matches(config.plugins_disabled):
        if is_essential(record):
            return Decision(True, "enabled", f"'{name}' is essential and cannot be disabled; "
                            "remove it from plugins.disabled")
        return Decision(False, "disabled", "listed in plugins.disabled "
                        f"(run `hermes plugins enable {quote(name)}` to turn it back on)", "disabled")
    if record.source == "builtin":
        return Decision(True, "enabled")
    if truthy(env.get("HERMES_SAFE_MODE")):
        return Decision(False, "disabled", "safe mode (HERMES_SAFE_MODE) loads builtin plugins only",
                        "safe_mode")
    project = project_of(record)
    if project is not None and not is_trusted(project, config, env):
        return Decision(False, "untrusted", f"the project folder {project} is not trusted; "
                        f"project plugins load only in a trusted folder (run `hermes trust "
                        f"{quote(str(project))}` if you trust its code)", "untrusted_project")
    only = load_filter(env)
    if only is not None and not record.matches(only):
        return Decision(False, "disabled", "not listed in HERMES_LOAD_PLUGINS", "load_filter")
    if only is None and record.kind == "exclusive":
        keys = enabling_keys(config.slots)  # an exclusive plugin of no slot: the original's memory
        key = keys.get(record.slot or "memory") or keys.get("memory", "")
        if config.get(key) not in (name, *record.aliases) and not record.matches(config.plugins_enabled):
            return Decision(False, "not selected", f"an exclusive provider loads when selected: "
                            f"`hermes config set {key} {quote(name)}`", "not_selected")
    elif only is None and not (record.source == "bundled" and record.kind in DEFAULT_ON_KINDS):
        if not record.matches(config.plugins_enabled) and not selected_by_slot(record, config):
            return Decision(False, "not enabled", "not in plugins.enabled "
                            f"(run `hermes plugins enable {quote(name)}`)", "not_enabled")
    missing = missing_env(record, env)
    if missing:
        return Decision(False, "missing env",
                        f"Plugin {name} disabled (missing: {', '.join(missing)}); set "
                        f"{'it' if len(missing) == 1 else 'them'} in the environment or in "
                        f"{config.home / '.env'}", "missing_env")
    return Decision(True, "enabled")


def project_of(record: PluginRecord) -> Path | None:
    """The project folder a ``project`` plugin came from (the folder holding
    ``.hermes/plugins``); None for other sources."""
    if record.source != "project" or record.path is None:
        return None
    for folder in record.path.parents:
        if folder.name == "plugins" and folder.parent.name == ".hermes":
            return folder.parent.parent
    return record.path.parent


def selected_by_slot(record: PluginRecord, config: Config) -> bool:
    """Naming a plugin in a slot's selection that enables (memory.provider, context.engine)
    enables it, whatever its kind."""
    names = (record.name, *record.aliases)
    return any(config.get(key) in names for key in enabling_keys(config.slots).values())


def missing_env(record: PluginRecord, env: Mapping[str, str]) -> list[str]:
    if record.manifest is None:
        return []
    return [req.name for req in record.manifest.requires_env if not env.get(req.name)]


def by_install_time(records: list[PluginRecord], stamps: Mapping[str, int | None]
                    ) -> list[PluginRecord]:
    """Installed plugins earliest-installed first, then by name (unknown times first)."""
    return sorted(records, key=lambda r: (stamps.get(r.name) or 0, r.name))


def format_stamp(stamp: int | None) -> str:
    """A stamp as a UTC time for messages ("shipped with hermes" for None)."""
    if stamp is None:
        return "shipped with hermes"
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(stamp / 1_000_000_000))

"""Plugins that should be active but are not, one short line each, for surfaces to show.

A plugin *should* be active when the user enabled or selected it, or when it is on by
default (builtin plugins, bundled backends, model providers and platforms). It is reported
when, after a boot, it is not loaded for a reason nobody chose: an invalid or incompatible
plugin.yaml, a name clash, a missing environment variable, an import or register() error.
Plugins that are off on purpose (disabled, safe mode, HERMES_LOAD_PLUGINS, not enabled or
not selected) are not reported; ``hermes plugins doctor`` explains those. Nor is a bundled
backend whose key is not set, unless the user asked for it (enabled it, or named it in a
selection key such as ``web.backend``): a key nobody set is a service nobody uses yet, and
``hermes plugins list`` shows it.

Other plugins (the chat banner) reach it as the ``plugin_health`` service.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from hermes_agent import DEFAULT_ON_KINDS, selected_by_slot

if TYPE_CHECKING:
    from hermes_agent import Config, Kernel, PluginRecord, PluginStatus

#: PluginStatus codes of plugins that are off because someone chose so.
CHOSEN_OFF = frozenset({"disabled", "safe_mode", "load_filter", "not_enabled", "not_selected",
                        "untrusted_project"})
#: Short labels for the codes whose kernel message is long or multi-line.
LABELS = {"manifest_invalid": "invalid plugin.yaml", "incompatible": "incompatible plugin.yaml",
          "missing_env": "missing environment variable", "import_error": "import failed",
          "register_error": "register() failed"}
_DETAIL_LIMIT = 100


@dataclass(frozen=True)
class Inactive:
    name: str
    code: str
    summary: str

    @property
    def doctor_command(self) -> str:
        return f"hermes plugins doctor {shlex.quote(self.name)}"

    @property
    def line(self) -> str:
        return f"plugin {self.name!r} is not active: {self.summary}; see `{self.doctor_command}`"


def expected_active(record: "PluginRecord", config: "Config") -> bool:
    """The user enabled or selected the plugin, or it is on by default."""
    return (record.source == "builtin"
            or (record.source == "bundled" and record.kind in DEFAULT_ON_KINDS)
            or record.matches(config.plugins_enabled) or selected_by_slot(record, config))


#: selection keys that name a backend besides the slots' own (web.backend, ...)
_EXTRA_SELECTION_KEYS = ("web.search_backend", "web.extract_backend", "web.fallback")


def asked_for(record: "PluginRecord", config: "Config") -> bool:
    """The user enabled the plugin or named it in a slot's selection key."""
    if record.matches(config.plugins_enabled) or selected_by_slot(record, config):
        return True
    names = {record.name, *record.aliases}
    keys = [info.config_key for info in config.slots.values() if info.config_key]
    keys += _EXTRA_SELECTION_KEYS
    for key in keys:
        value = config.get(key)
        chosen = value if isinstance(value, list) else [value]
        if any(isinstance(item, str) and item in names for item in chosen):
            return True
    return False


def summary(status: "PluginStatus") -> str:
    """One line: the label of the status code and the first specific detail."""
    lines = [line.strip() for line in status.reason.strip().splitlines() if line.strip()]
    if status.code in ("manifest_invalid", "incompatible") and len(lines) > 1:
        more = f" (and {len(lines) - 2} more)" if len(lines) > 2 else ""
        return f"{LABELS[status.code]}: {_cut(lines[1], _DETAIL_LIMIT - len(more))}{more}"
    if status.code == "missing_env":
        detail = status.reason.partition("(missing: ")[2].partition(")")[0] or status.reason
    else:
        detail = status.cause or (lines[0] if lines else status.state)
    label = LABELS.get(status.code)
    return f"{label}: {_cut(detail, _DETAIL_LIMIT)}" if label else _cut(detail, _DETAIL_LIMIT)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


def inactive_plugins(statuses: Iterable["PluginStatus"], config: "Config") -> list[Inactive]:
    """Each plugin that should be active and is not, once per name, in load order."""
    found: dict[str, Inactive] = {}
    for status in statuses:
        if status.state == "loaded" or status.code in CHOSEN_OFF or status.name in found:
            continue
        if status.code == "missing_env" and status.record.source == "bundled" \
                and not asked_for(status.record, config):
            continue
        if expected_active(status.record, config):
            found[status.record.name] = Inactive(status.record.name, status.code, summary(status))
    return list(found.values())


class PluginHealth:
    """The ``plugin_health`` service: the inactive plugins of one kernel."""

    def __init__(self, kernel: Kernel):
        self.kernel = kernel

    def inactive(self) -> list[Inactive]:
        return inactive_plugins(self.kernel.plugins.values(), self.kernel.config)

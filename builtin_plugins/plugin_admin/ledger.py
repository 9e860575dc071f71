"""The load ledger: what the last boot actually did with each plugin.

``hermes plugins list``, ``doctor`` and ``tools list`` must not import plugin code, yet they
must show what really happened. After every boot (the ``on_plugins_loaded`` hook) each
plugin's outcome is recorded with a fingerprint of its files, and the toolset and
description of each tool it registered; :func:`recorded_statuses` merges that outcome into
the current decision while the fingerprint still matches, and reports the plugin as
"enabled, not loaded since it last changed" otherwise. A plugin unloaded while hermes ran
(it raised SystemExit or the like) is recorded as failed at once, and its ``last_fault`` is
kept across later boots until the plugin's files change.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_agent import MANIFEST_NAMES, PluginRecord, PluginStatus, __version__, write_atomic

if TYPE_CHECKING:
    from hermes_agent import Kernel

LEDGER = Path("cache") / "plugin-status.json"
REGISTERED = ("tools", "hooks", "commands", "cli_commands", "providers", "skills")  # PluginStatus lists


def fingerprint(record: PluginRecord) -> str:
    if record.entry_point is not None:
        ep = record.entry_point
        return f"ep:{ep.group}:{ep.value}:{ep.dist_name}:{ep.dist_version}:{ep.dist_stamp}"
    if record.source == "builtin":
        return f"builtin:{__version__}"
    parts = []
    for name in (*MANIFEST_NAMES, "__init__.py"):
        try:
            stat = (record.path / name).stat()  # type: ignore[operator]
        except (OSError, TypeError):
            continue
        parts.append(f"{name}:{stat.st_mtime_ns}:{stat.st_size}")
    return f"{record.path}|{'|'.join(parts)}"


def read_ledger(home: Path) -> dict[str, Any]:
    try:
        data = json.loads((home / LEDGER).read_text(encoding="utf-8"))
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def status_dict(status: PluginStatus) -> dict[str, Any]:
    """A plugin's status as JSON data (the ledger's entries, `plugins list --json`)."""
    record = status.record
    return {"name": record.name, "version": record.version, "kind": record.kind,
            "source": record.source, "state": status.state, "reason": status.reason,
            "code": status.code, "cause": status.cause, "clash": status.clash,
            "location": record.location,
            "description": record.manifest.description if record.manifest else "",
            **{key: getattr(status, key) for key in REGISTERED},
            "warnings": [*record.warnings, *status.warnings],
            "shadows": [r.location for r in record.shadows]}


def _entry(status: PluginStatus, previous: Any) -> dict[str, Any]:
    entry = status_dict(status)
    entry["fingerprint"] = fingerprint(status.record)
    entry["time"] = time.time()
    if isinstance(previous, dict) and previous.get("fingerprint") == entry["fingerprint"] \
            and previous.get("last_fault"):
        entry["last_fault"] = previous["last_fault"]
    return entry


def _write(home: Path, entries: dict[str, Any]) -> None:
    try:
        write_atomic(home / LEDGER, json.dumps(entries, indent=1, sort_keys=True))
    except OSError:
        pass  # a read-only home still runs; the listing then says "not loaded yet"


def record_outcomes(plugins: Mapping[str, PluginStatus], home: Path,
                    tools: Any = None, **_: Any) -> None:
    """``on_plugins_loaded``: store the outcome of every plugin that loaded or failed (and,
    given the kernel's ``tools``, the toolset and description of each tool registered)."""
    home = Path(home)
    entries = read_ledger(home)
    for status in plugins.values():
        if status.state not in ("loaded", "failed") or "@" in status.name:
            continue
        entry = _entry(status, entries.get(status.name))
        if tools is not None:
            specs = [tools.tools[name] for name in status.tools if name in tools.tools]
            entry["tool_info"] = {spec.name: {"toolset": spec.toolset, "description":
                                              spec.schema.get("description", spec.description)}
                                  for spec in specs}
        entries[status.name] = entry
    _write(home, entries)


def record_fault(status: PluginStatus, home: Path) -> None:
    """A plugin was unloaded while hermes ran (``Kernel.quarantine``): record it as failed,
    with a ``last_fault`` that later boots keep while the plugin is unchanged."""
    home = Path(home)
    entries = read_ledger(home)
    entry = _entry(status, None)
    entry["last_fault"] = {"reason": status.reason, "cause": status.cause, "time": entry["time"]}
    entries[status.name] = entry
    _write(home, entries)


def last_outcome(ledger: dict[str, Any], record: PluginRecord) -> dict[str, Any] | None:
    entry = ledger.get(record.name)
    if isinstance(entry, dict) and entry.get("fingerprint") == fingerprint(record):
        return entry
    return None


# What a ledger entry restores onto the current decision.
_OUTCOME_KEYS = ("state", "reason", "code", "cause", "clash", *REGISTERED)


@dataclass
class Recorded:
    """One plugin as known without importing it: the decision now, merged with the last load."""

    status: PluginStatus
    outcome: dict[str, Any] | None  # the ledger entry of the last load, while still current
    pending: bool  # it should load, but has not been loaded since it last changed


def recorded_statuses(kernel: "Kernel") -> list[Recorded]:
    """Every discovered plugin from plugin.yaml, config and the ledger; imports no plugin code.
    ``tools``/``hooks``/``cli_commands`` are what the last load registered, or else what
    plugin.yaml declares."""
    from hermes_agent import decide

    ledger = read_ledger(kernel.home)
    out = []
    for record in kernel.discover().all_records():
        decision = decide(record, kernel.config, kernel.env)
        manifest = record.manifest
        status = PluginStatus(record, decision.state, decision.reason, decision.code,
                              tools=list(manifest.provides_tools) if manifest else [],
                              hooks=list(manifest.provides_hooks) if manifest else [],
                              cli_commands=list(manifest.cli_commands) if manifest else [])
        outcome = last_outcome(ledger, record) if decision.load else None
        if outcome is not None:
            for key in _OUTCOME_KEYS:
                setattr(status, key, outcome.get(key, getattr(status, key)))
            status.warnings = [w for w in outcome.get("warnings", []) if w not in record.warnings]
        if decision.reason and decision.load:
            status.warnings.append(decision.reason)
        out.append(Recorded(status, outcome, decision.load and outcome is None))
    return out

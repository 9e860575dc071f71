"""The load ledger: what the last boot actually did with each plugin.

``hermes plugins list`` must not import plugin code, yet it must show what really happened.
After every boot (the ``on_plugins_loaded`` hook) each plugin's outcome is recorded with a
fingerprint of its files; the listing shows that outcome while the fingerprint still
matches, and "enabled, not loaded yet" otherwise. A plugin unloaded while hermes ran (it
raised SystemExit or the like) is recorded as failed at once, and its ``last_fault`` is kept
across later boots until the plugin's files change.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hermes_agent import PluginRecord, PluginStatus, __version__, write_atomic

LEDGER = Path("cache") / "plugin-status.json"


def fingerprint(record: PluginRecord) -> str:
    if record.entry_point is not None:
        ep = record.entry_point
        return f"ep:{ep.group}:{ep.value}:{ep.dist_name}:{ep.dist_version}:{ep.dist_stamp}"
    if record.source == "builtin":
        return f"builtin:{__version__}"
    parts = []
    for name in ("plugin.yaml", "plugin.yml", "__init__.py"):
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


def _entry(status: PluginStatus, previous: Any) -> dict[str, Any]:
    entry = status.to_dict()
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


def record_outcomes(plugins: Mapping[str, PluginStatus], home: Path, **_: Any) -> None:
    """``on_plugins_loaded``: store the outcome of every plugin that loaded or failed."""
    home = Path(home)
    entries = read_ledger(home)
    for status in plugins.values():
        if status.state not in ("loaded", "failed") or "@" in status.name:
            continue
        entries[status.name] = _entry(status, entries.get(status.name))
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

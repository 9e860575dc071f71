"""Install order: plugins load earliest-installed first, so a name two plugins claim stays
with the one that had it first, whatever the plugins are called.

When a plugin was installed:

- builtin and bundled plugins ship with hermes: always first (in discovery order);
- a plugin recorded in ``$HERMES_HOME/plugins.lock`` (``hermes plugins install``): its first
  install time there (updates keep it; the lock's ``history`` holds the older entries);
- an entry-point plugin: the modification time of its distribution's ``RECORD`` (written by
  pip at install time);
- any other plugin directory: the older of the directory's and its manifest's modification
  times (importing the plugin adds ``__pycache__`` and so touches the directory, never the
  manifest).

Equal times are ordered by name. Only ``Kernel.boot`` reads this, never a listing.
"""

from __future__ import annotations

import calendar
import json
import os
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .discovery import PluginRecord
from .manifest import MANIFEST_NAMES

SHIPPED = ("builtin", "bundled")  # installed together with hermes itself
_LOCK_FILE = "plugins.lock"
_LOCK_TIME = "%Y-%m-%dT%H:%M:%SZ"


def read_install_times(home: Path) -> dict[str, int]:
    """First install time (ns since the epoch) of each plugin in plugins.lock. A missing or
    unreadable lock gives none (``hermes plugins doctor`` reports a corrupt lock)."""
    try:
        data = json.loads((home / _LOCK_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    plugins = data.get("plugins") if isinstance(data, dict) else None
    times: dict[str, int] = {}
    for name, entry in (plugins.items() if isinstance(plugins, dict) else ()):
        stamps = [_lock_stamp(e) for e in _entry_versions(entry)]
        known = [s for s in stamps if s is not None]
        if known:
            times[name] = min(known)
    return times


def _entry_versions(entry: Any) -> list[Any]:
    if not isinstance(entry, dict):
        return []
    history = entry.get("history")
    return [entry, *(history if isinstance(history, list) else [])]


def _lock_stamp(entry: Any) -> int | None:
    value = entry.get("installed_at") if isinstance(entry, dict) else None
    if not isinstance(value, str):
        return None
    try:
        return calendar.timegm(time.strptime(value, _LOCK_TIME)) * 1_000_000_000
    except ValueError:
        return None


def install_stamp(record: PluginRecord, locked: dict[str, int]) -> int | None:
    """When ``record`` was installed (ns since the epoch); None for a plugin shipped with
    hermes, or when nothing tells."""
    if record.source in SHIPPED:
        return None
    if record.name in locked:
        return locked[record.name]
    if record.entry_point is not None:
        return record.entry_point.dist_stamp or None
    if record.path is None:
        return None
    stamps = []
    for path in (record.path, *(record.path / name for name in MANIFEST_NAMES)):
        try:
            stamps.append(os.stat(path).st_mtime_ns)
        except OSError:
            continue
    return min(stamps) if stamps else None


def in_install_order(records: Iterable[PluginRecord],
                     home: Path) -> list[tuple[PluginRecord, int | None]]:
    """``records`` with their install stamps, in load order: shipped plugins first (their
    discovery order kept), then by install time, then by name."""
    locked = read_install_times(home)
    stamped = [(record, install_stamp(record, locked)) for record in records]
    shipped = [pair for pair in stamped if pair[0].source in SHIPPED]
    installed = [pair for pair in stamped if pair[0].source not in SHIPPED]
    installed.sort(key=lambda pair: (pair[1] if pair[1] is not None else 0, pair[0].name))
    return [*shipped, *installed]


def format_stamp(stamp: int | None) -> str:
    """A stamp as a UTC time for messages ("shipped with hermes" for None)."""
    if stamp is None:
        return "shipped with hermes"
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(stamp / 1_000_000_000))

"""When each installed plugin was installed, so the kernel loads them earliest-installed
first and a name two plugins claim stays with the one that had it first.

The kernel asks through the ``plugin_install_times`` hook: plugins.lock is this plugin's
file, so the kernel never reads it.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from hermes_agent import PluginRecord, find_manifest

if TYPE_CHECKING:
    from hermes_agent import Kernel


class InstallTimes:
    """``install_times(records)``: each record's install time in ns since the epoch, or None."""

    def __init__(self, kernel: Kernel):
        self.home: Path = kernel.home

    def __call__(self, records: Iterable[PluginRecord]) -> dict[str, int | None]:
        locked = read_install_times(self.home)
        return {record.name: install_stamp(record, locked) for record in records}


def read_install_times(home: Path) -> dict[str, int]:
    """First install time of each plugin in plugins.lock (``hermes plugins install``;
    updates keep it, ``history`` holds older entries)."""
    try:
        data = json.loads((home / "plugins.lock").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    plugins = data.get("plugins") if isinstance(data, dict) else None
    times: dict[str, int] = {}
    for name, entry in (plugins.items() if isinstance(plugins, dict) else ()):
        history = entry.get("history") if isinstance(entry, dict) else None
        versions = [entry, *(history if isinstance(history, list) else [])]
        stamps = [stamp for stamp in map(_lock_stamp, versions) if stamp is not None]
        if stamps:
            times[name] = min(stamps)
    return times


def _lock_stamp(entry: object) -> int | None:
    import calendar  # here: it imports locale, a cost `plugins list` need not pay

    value = entry.get("installed_at") if isinstance(entry, dict) else None
    try:
        return calendar.timegm(time.strptime(value, "%Y-%m-%dT%H:%M:%SZ")) * 1_000_000_000
    except (TypeError, ValueError):
        return None


def install_stamp(record: PluginRecord, locked: dict[str, int]) -> int | None:
    """Its plugins.lock entry, else its distribution's RECORD mtime, else the older of its
    folder's and manifest's mtimes (an import touches the folder, never the manifest)."""
    if record.name in locked:
        return locked[record.name]
    if record.entry_point is not None:
        return record.entry_point.dist_stamp or None
    if record.path is None:
        return None
    stamps = []
    manifest = find_manifest(record.path)
    for path in (record.path, *([manifest] if manifest else [])):
        try:
            stamps.append(os.stat(path).st_mtime_ns)
        except OSError:
            continue
    return min(stamps) if stamps else None

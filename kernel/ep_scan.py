"""Scan the plugin entry-point groups, remembering the answer until an install changes it.

Asking ``importlib.metadata`` reads every installed distribution's metadata, which costs more
than the rest of start-up's discovery together. The answer only changes when a distribution
is installed, upgraded or removed, and pip does that by adding or deleting ``*.dist-info``
directories in a ``sys.path`` directory, which changes that directory's mtime. So the scan's
result is stored in the validation cache under a key made of ``sys.path`` and the mtime of
each of its entries; any install or uninstall (or a changed path) misses and rescans.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, TypedDict

from .home import ValidationCache


class EntryPointFacts(TypedDict):
    """What discovery needs from one entry point, without its distribution object."""

    group: str
    name: str
    value: str
    dist_name: str
    dist_version: str
    dist_stamp: int
    manifest: str  # path of the plugin.yaml found for it, "" when there is none
    summary: str
    author: str


def path_stamp(paths: list[str]) -> bytes:
    """``sys.path`` with the mtime of each entry: changes whenever pip installs or removes."""
    parts = []
    for entry in map(os.path.abspath, paths):  # "" (python -c) is the current directory
        try:
            stamp = os.stat(entry).st_mtime_ns
        except OSError:
            stamp = -1
        parts.append(f"{entry}\0{stamp}")
    return "\n".join(parts).encode("utf-8", "surrogateescape")


def entry_point_facts(groups: list[str], cache: ValidationCache | None) -> list[EntryPointFacts]:
    key = ""
    if cache is not None:
        key = cache.key("entry-points", "\0".join(groups).encode() + b"\n" + path_stamp(sys.path))
        hit = cache.get(key)
        if isinstance(hit, list):
            return hit
    facts = _scan(groups)
    if cache is not None:
        cache.put(key, facts)
    return facts


def _scan(groups: list[str]) -> list[EntryPointFacts]:
    from importlib.metadata import entry_points

    facts: list[EntryPointFacts] = []
    for group in groups:
        for ep in sorted(entry_points(group=group), key=lambda e: e.name):
            dist = getattr(ep, "dist", None)
            meta = dist.metadata if dist else None
            manifest = _find_entry_point_manifest(ep, dist)
            facts.append(EntryPointFacts(
                group=group, name=ep.name, value=ep.value,
                dist_name=(meta["Name"] or "") if meta else "",
                dist_version=dist.version if dist else "",
                dist_stamp=_dist_stamp(dist),
                manifest=str(manifest) if manifest else "",
                summary=(meta.get("Summary") or "") if meta else "",
                author=(meta.get("Author") or meta.get("Author-email") or "") if meta else ""))
    return facts


def _dist_stamp(dist: Any) -> int:
    base = getattr(dist, "_path", None)  # PathDistribution: the .dist-info directory
    for candidate in ((Path(base) / "RECORD", Path(base)) if base else ()):
        try:
            return candidate.stat().st_mtime_ns
        except OSError:
            continue
    return 0


def _find_entry_point_manifest(ep: Any, dist: Any) -> Path | None:
    """The plugin.yaml shipped next to the entry point's module, found without importing it."""
    from .manifest import find_manifest  # here: importing this module stays light (help index)
    module = ep.value.split(":")[0].strip()
    prefix = module.replace(".", "/")
    candidates = [f"{prefix}/plugin.yaml", f"{prefix}/plugin.yml"]
    shared = f"/hermes_agent/plugins/{ep.name}/plugin.yaml"  # data files: share/hermes_agent/...
    path: Path | None = None
    for file in (dist.files or []) if dist else []:
        text = str(file).replace("\\", "/")
        if text in candidates:
            return Path(str(dist.locate_file(file)))
        if path is None and text.endswith(shared):
            path = Path(str(dist.locate_file(file)))
    if path is None and "." not in module:
        from importlib.util import find_spec  # top-level only: finding it imports nothing

        try:
            spec = find_spec(module)
        except (ImportError, ValueError):
            spec = None
        for location in (spec.submodule_search_locations or []) if spec else []:
            path = find_manifest(Path(location))
            if path:
                break
    return path

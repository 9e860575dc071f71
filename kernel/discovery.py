"""Discovery: every plugin from every source, found by reading manifests, never importing code.

Sources, lowest precedence first: ``builtin``, ``bundled`` (hermes_agent/plugins/<category>/
<name>), ``user`` ($HERMES_HOME/plugins/[<category>/]<name>), ``project`` (./.hermes/plugins,
with HERMES_ENABLE_PROJECT_PLUGINS=1) and ``entrypoint``. A later source shadows an earlier
one of the same name (builtin names are reserved); two of one name in one source both fail.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import ManifestError
from .home import ValidationCache, path_stamp
from .manifest import MANIFEST_NAMES, Manifest, builtin_only_warnings, find_manifest
from .manifest_read import read_manifest, without_controls

ENTRY_POINT_GROUPS = {"hermes_agent.plugins": None, "hermes_agent.memory_providers": "memory"}
SLOT_CATEGORIES = {"memory": "memory", "context_engine": "context_engine",
                   "context-engines": "context_engine"}


@dataclass(frozen=True)
class EntryPointRef:
    group: str
    name: str
    value: str
    dist_name: str = ""
    dist_version: str = ""
    dist_stamp: int = 0  # mtime of the distribution's RECORD: changes on every reinstall


@dataclass
class PluginRecord:
    """Everything known about one discovered plugin before any of its code runs."""

    name: str
    source: str
    manifest: Manifest | None
    path: Path | None = None  # plugin directory, when there is one
    module: str = ""  # import name for builtin plugins
    entry_point: EntryPointRef | None = None
    category: str = ""
    slot: str = ""  # "memory" / "context_engine" for exclusive providers found by location
    warnings: list[str] = field(default_factory=list)
    error: str = ""  # manifest or clash problem: the plugin cannot load
    error_code: str = ""  # "manifest_invalid", "incompatible" or "duplicate"
    shadows: list["PluginRecord"] = field(default_factory=list)

    @property
    def kind(self) -> str:
        return self.manifest.kind if self.manifest else "standalone"

    @property
    def version(self) -> str:
        if self.manifest and self.manifest.version:
            return self.manifest.version
        return self.entry_point.dist_version if self.entry_point else ""

    @property
    def aliases(self) -> tuple[str, ...]:
        """Other names config may use for this plugin (the original's `<category>/<dir>` keys)."""
        names = []
        if self.path is not None:
            if self.category:
                names.append(f"{self.category}/{self.path.name}")
            if self.path.name != self.name:
                names.append(self.path.name)
        return tuple(names)

    def matches(self, names: object) -> bool:
        if not isinstance(names, (list, tuple, set, frozenset)):
            return False
        return self.name in names or any(alias in names for alias in self.aliases)

    @property
    def location(self) -> str:
        ep = self.entry_point
        if ep:
            return f"entry point {ep.name} = {ep.value}" + (
                f" ({ep.dist_name} {ep.dist_version})" if ep.dist_name else "")
        return str(self.path) if self.path else self.module


@dataclass
class Discovery:
    plugins: dict[str, PluginRecord]  # winners, in load order
    problems: list[PluginRecord]  # records that cannot load at all (clashes without a winner)

    def get(self, name: str) -> PluginRecord | None:
        if name in self.plugins:
            return self.plugins[name]
        return next((r for r in self.plugins.values() if name in r.aliases), None)

    def all_records(self) -> list[PluginRecord]:
        return [*self.plugins.values(), *self.problems]


def bundled_dir(env: Mapping[str, str]) -> Path:
    override = env.get("HERMES_BUNDLED_PLUGINS")
    return Path(override) if override else _package_dir("plugins")


def builtin_dir() -> Path:
    return _package_dir("builtin_plugins")


def _package_dir(name: str) -> Path:
    """The folder of ``hermes_agent.<name>``, found without importing it: next to this file
    when installed, else wherever the import system finds it (an editable install)."""
    beside = Path(__file__).parent / name
    if (beside / "__init__.py").is_file():
        return beside
    from importlib.util import find_spec

    spec = find_spec(f"{__package__}.{name}")
    locations = list(spec.submodule_search_locations or []) if spec else []
    return Path(locations[0]) if locations else beside


def _folders(root: Path) -> list[Path]:
    """``root``'s plugin-like subfolders, by name (comparing Paths is slow)."""
    return sorted((p for p in root.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))),
                  key=lambda p: p.name)


def _scan_tree(root: Path, source: str, cache: ValidationCache | None) -> list[PluginRecord]:
    """Plugins at ``root/<name>/`` or one level deeper, ``root/<category>/<name>/``."""
    found: list[PluginRecord] = []
    for entry in _folders(root) if root.is_dir() else ():
        manifest_path = find_manifest(entry)
        if manifest_path:
            found.append(_directory_record(entry, manifest_path, source, "", cache))
            continue
        nested = []
        for sub in _folders(entry):
            sub_manifest = find_manifest(sub)
            if sub_manifest:
                nested.append(_directory_record(sub, sub_manifest, source, entry.name, cache))
        if not nested and source == "user" and (entry / "__init__.py").is_file():
            # the original's memory provider folder: loaded when memory.provider selects it
            manifest = Manifest(name=entry.name, kind="exclusive", synthesized=True,
                                description="memory provider folder (no plugin.yaml)")
            nested.append(PluginRecord(entry.name, "user", manifest, path=entry, slot="memory"))
        found.extend(nested)
    return found


def _read(path: Path, cache: ValidationCache | None, name: str, source: str
          ) -> tuple[Manifest | None, list[str], ManifestError | None]:
    result = read_manifest(path, cache, default_name=name)
    warnings = [*result.warnings, *builtin_only_warnings(result.manifest, source)]
    return result.manifest, [f"{path}: {w}" for w in warnings], result.error


def _directory_record(directory: Path, manifest_path: Path, source: str, category: str,
                      cache: ValidationCache | None) -> PluginRecord:
    manifest, warnings, error = _read(manifest_path, cache, directory.name, source)
    return PluginRecord(manifest.name if manifest else directory.name, source, manifest,
                        path=directory, category=category, slot=SLOT_CATEGORIES.get(category, ""),
                        warnings=warnings, error=str(error or ""),
                        error_code=error.code if error else "")


def builtin_records(cache: ValidationCache | None) -> list[PluginRecord]:
    records = _scan_tree(builtin_dir(), "builtin", cache)
    for record in records:
        record.module = f"hermes_agent.builtin_plugins.{record.path.name}"  # type: ignore[union-attr]
    return records


def _entry_point_records(cache: ValidationCache | None) -> list[PluginRecord]:
    records = []
    for facts in entry_point_facts(list(ENTRY_POINT_GROUPS), cache):
        name, slot = facts["name"], ENTRY_POINT_GROUPS[facts["group"]]
        ref = EntryPointRef(facts["group"], name, facts["value"], facts["dist_name"],
                            facts["dist_version"], facts["dist_stamp"])
        if facts["manifest"]:
            manifest, warnings, error = _read(Path(facts["manifest"]), cache, name, "entrypoint")
        else:
            manifest = Manifest(name=name, version=without_controls(facts["dist_version"]),
                                description=without_controls(facts["summary"]),
                                author=without_controls(facts["author"]), synthesized=True)
            warnings, error = [], None
        if slot and manifest and manifest.kind != "exclusive":
            manifest = Manifest(**{**manifest.__dict__, "kind": "exclusive"})
        if manifest and manifest.name != name:
            warnings.append(f"plugin.yaml names '{manifest.name}' but the entry point is "
                            f"'{name}'; the entry-point name is used")
        records.append(PluginRecord(name, "entrypoint", manifest, entry_point=ref, slot=slot or "",
                                    warnings=warnings, error=str(error or ""),
                                    error_code=error.code if error else ""))
    return records


def entry_point_facts(groups: list[str], cache: ValidationCache | None) -> list[dict[str, Any]]:
    """What discovery needs from each entry point of ``groups``, cached until an install
    changes ``sys.path``'s folders (reading every distribution's metadata is slow)."""
    key = ValidationCache.key("entry-points", "\0".join(groups).encode() + b"\n" + path_stamp(sys.path))
    hit = cache.get(key) if cache is not None else None
    if isinstance(hit, list):
        return hit
    facts: list[dict[str, Any]] = []
    if _may_declare(groups):  # else importlib.metadata, slow to import, would find none
        from importlib.metadata import entry_points

        for group in groups:
            for ep in sorted(entry_points(group=group), key=lambda e: e.name):
                dist = getattr(ep, "dist", None)
                meta = (dist.metadata if dist else None) or {}
                manifest = _entry_point_manifest(ep, dist)
                facts.append(dict(
                    group=group, name=ep.name, value=ep.value, dist_name=meta.get("Name") or "",
                    dist_version=dist.version if dist else "", dist_stamp=_dist_stamp(dist),
                    manifest=str(manifest) if manifest else "", summary=meta.get("Summary") or "",
                    author=meta.get("Author") or meta.get("Author-email") or ""))
    if cache is not None:
        cache.put(key, facts)
    return facts


def _may_declare(groups: list[str]) -> bool:
    """Whether a distribution on ``sys.path`` may declare ``groups``: an entry_points.txt
    naming one, or a place only importlib.metadata can read (a zip, another finder)."""
    if any(hasattr(f, "find_distributions") and getattr(f, "__name__", "") != "PathFinder"
           for f in sys.meta_path):
        return True
    names_of = [group.encode() for group in groups]
    for entry in sys.path:
        try:
            with os.scandir(entry or ".") as items:
                names = [i.path for i in items if i.name.endswith((".dist-info", ".egg-info"))]
        except NotADirectoryError:
            return True
        except OSError:
            continue
        for name in names:
            try:
                with open(os.path.join(name, "entry_points.txt"), "rb") as handle:
                    text = handle.read()
            except OSError:
                continue
            if any(group in text for group in names_of):
                return True
    return False


def _dist_stamp(dist: Any) -> int:
    base = getattr(dist, "_path", None)  # PathDistribution: the .dist-info directory
    for candidate in ((Path(base) / "RECORD", Path(base)) if base else ()):
        try:
            return candidate.stat().st_mtime_ns
        except OSError:
            continue
    return 0


def _entry_point_manifest(ep: Any, dist: Any) -> Path | None:
    """The plugin.yaml shipped next to the entry point's module, found without importing it."""
    module = ep.value.split(":")[0].strip()
    prefix = module.replace(".", "/")
    shared = f"/hermes_agent/plugins/{ep.name}/plugin.yaml"  # data files: share/hermes_agent/...
    path: Path | None = None
    for file in (dist.files or []) if dist else []:
        text = str(file).replace("\\", "/")
        if text in (f"{prefix}/{n}" for n in MANIFEST_NAMES):
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


def discovery_inputs(home: Path, env: Mapping[str, str], cache: ValidationCache | None = None,
                     cwd: Path | None = None) -> tuple[list[str], list[str]]:
    """The paths whose change may change what :func:`discover` finds, to stamp for a cache
    of its result: ``(shipped, installed)``. ``shipped``: hermes' own plugin folders (changed
    by an install) and ``sys.path``'s folders (pip installs and removes there); ``installed``:
    the plugins the user adds (the home's, the project's, a ``HERMES_BUNDLED_PLUGINS`` tree,
    entry-point plugins' plugin.yaml). Each tree lists its folder, each plugin (or category)
    folder in it, each plugin folder in a category and their plugin.yaml: adding or removing
    anything changes the mtime of a folder listed. Reads no manifest."""
    shipped: list[str] = [os.path.abspath(entry) for entry in sys.path]
    installed: list[str] = []
    _tree_inputs(builtin_dir(), shipped)
    _tree_inputs(bundled_dir(env), installed if "HERMES_BUNDLED_PLUGINS" in env else shipped)
    _tree_inputs(home / "plugins", installed)
    if "HERMES_ENABLE_PROJECT_PLUGINS" in env:  # set at all: discovery may read the cwd
        _tree_inputs((cwd or Path.cwd()) / ".hermes" / "plugins", installed)
    installed += [f["manifest"] for f in entry_point_facts(list(ENTRY_POINT_GROUPS), cache)
                  if f["manifest"]]
    return shipped, installed


def _tree_inputs(root: Path, paths: list[str]) -> None:
    paths.append(str(root))
    for folder in _listed_folders(root):
        paths.append(str(folder))
        manifest = find_manifest(folder)
        if manifest is not None:
            paths.append(str(manifest))
            continue
        for sub in _listed_folders(folder):
            paths.append(str(sub))
            manifest = find_manifest(sub)
            if manifest is not None:
                paths.append(str(manifest))


def _listed_folders(root: Path) -> list[Path]:
    """:func:`_folders`, or none when ``root`` cannot be read."""
    try:
        return _folders(root)
    except OSError:
        return []


def discover(home: Path, env: Mapping[str, str] | None = None, cwd: Path | None = None,
             cache: ValidationCache | None = None, entry_points: bool = True) -> Discovery:
    """Find every plugin. Reads manifests only; imports no plugin code."""
    env = os.environ if env is None else env
    by_source = [builtin_records(cache), _scan_tree(bundled_dir(env), "bundled", cache),
                 _scan_tree(home / "plugins", "user", cache)]
    if env.get("HERMES_ENABLE_PROJECT_PLUGINS", "").strip().lower() in ("1", "true", "yes", "on"):
        by_source.append(_scan_tree((cwd or Path.cwd()) / ".hermes" / "plugins", "project", cache))
    if entry_points:
        by_source.append(_entry_point_records(cache))
    winners: dict[str, PluginRecord] = {}
    problems: list[PluginRecord] = []
    for records in by_source:
        seen: dict[str, list[PluginRecord]] = {}
        for record in records:
            seen.setdefault(record.name, []).append(record)
        for name, group in seen.items():
            previous = winners.get(name)
            if len(group) > 1:
                where = " and ".join(r.location for r in group)
                error = (f"two {group[0].source} plugins are named '{name}' ({where}); "
                         "rename one of them in its plugin.yaml")
            elif previous is not None and previous.source == "builtin":
                error = (f"'{name}' is the name of a builtin plugin and cannot be reused; "
                         f"rename the plugin at {group[0].location}")
            else:
                if previous is not None:
                    group[0].shadows = [previous, *previous.shadows]
                    previous.shadows = []
                    del winners[name]
                winners[name] = group[0]
                continue
            for record in group:
                record.error_code, record.error = "duplicate", error
            problems.extend(group)
    return Discovery(winners, problems)

"""Discovery: find every plugin from every source by reading manifests, never importing code.

One :func:`discover` feeds the runtime and every CLI listing. Sources, lowest precedence
first: ``builtin`` (hermes_agent.builtin_plugins), ``bundled`` (hermes_agent/plugins/
<category>/<name>), ``user`` ($HERMES_HOME/plugins/<name> or <category>/<name>),
``project`` (./.hermes/plugins, only with HERMES_ENABLE_PROJECT_PLUGINS=1) and
``entrypoint`` (the ``hermes_agent.plugins`` and ``hermes_agent.memory_providers`` groups).

A later source shadows an earlier one with the same name (the loser is kept and reported),
except that builtin names are reserved. Two plugins with one name inside a single source
are an error for both: nothing guesses which one was meant.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .ep_scan import EntryPointFacts, entry_point_facts
from .manifest import Manifest, builtin_only_warnings, find_manifest, read_manifest
from .vcache import ValidationCache

SOURCES = ("builtin", "bundled", "user", "project", "entrypoint")
ENTRY_POINT_GROUPS = {"hermes_agent.plugins": None, "hermes_agent.memory_providers": "memory"}
SLOT_CATEGORIES = {"memory": "memory", "context_engine": "context_engine",
                   "context-engines": "context_engine"}
_TRUTHY = ("1", "true", "yes", "on")


@dataclass(frozen=True)
class EntryPointRef:
    """Where an entry-point plugin comes from (its group, name, target and distribution)."""

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
        if self.entry_point:
            ep = self.entry_point
            dist = f" ({ep.dist_name} {ep.dist_version})" if ep.dist_name else ""
            return f"entry point {ep.name} = {ep.value}{dist}"
        return str(self.path) if self.path else self.module


@dataclass
class Discovery:
    """What one discovery found: the plugins that may load, and those that cannot."""

    plugins: dict[str, PluginRecord]  # winners, in load order
    problems: list[PluginRecord]  # records that cannot load at all (clashes without a winner)

    def get(self, name: str) -> PluginRecord | None:
        if name in self.plugins:
            return self.plugins[name]
        for record in self.plugins.values():
            if name in record.aliases:
                return record
        return None

    def all_records(self) -> list[PluginRecord]:
        return [*self.plugins.values(), *self.problems]


def bundled_dir(env: Mapping[str, str]) -> Path:
    override = env.get("HERMES_BUNDLED_PLUGINS")
    return Path(override) if override else _package_dir("plugins")


def builtin_dir() -> Path:
    return _package_dir("builtin_plugins")


def _package_dir(name: str) -> Path:
    """The folder of the sub-package ``hermes_agent.<name>``, found without importing it
    (the kernel imports no plugin): next to this file when installed, else wherever the
    import system finds it (an editable install maps the folders elsewhere)."""
    beside = Path(__file__).parent / name
    if (beside / "__init__.py").is_file():
        return beside
    from importlib.util import find_spec

    spec = find_spec(f"{__package__}.{name}")
    locations = list(spec.submodule_search_locations or []) if spec else []
    return Path(locations[0]) if locations else beside


def _scan_tree(root: Path, source: str, cache: ValidationCache | None) -> list[PluginRecord]:
    """Plugins at ``root/<name>/`` or one level deeper, ``root/<category>/<name>/``."""
    found: list[PluginRecord] = []
    if not root.is_dir():
        return found
    for entry in sorted(root.iterdir(), key=_name):  # by name: comparing Paths is slow
        if not entry.is_dir() or entry.name.startswith((".", "_")):
            continue
        manifest_path = find_manifest(entry)
        if manifest_path:
            found.append(_directory_record(entry, manifest_path, source, "", cache))
            continue
        nested = []
        for sub in sorted(entry.iterdir(), key=_name):
            sub_manifest = find_manifest(sub) if sub.is_dir() and not sub.name.startswith((".", "_")) else None
            if sub_manifest:
                nested.append(_directory_record(sub, sub_manifest, source, entry.name, cache))
        if not nested and source == "user" and (entry / "__init__.py").is_file():
            nested.append(_provider_folder_record(entry))
        found.extend(nested)
    return found


def _name(path: Path) -> str:
    return path.name


def _directory_record(directory: Path, manifest_path: Path, source: str, category: str,
                      cache: ValidationCache | None) -> PluginRecord:
    result = read_manifest(manifest_path, cache, default_name=directory.name)
    name = result.manifest.name if result.manifest else directory.name
    warnings = [*result.warnings, *builtin_only_warnings(result.manifest, source)]
    record = PluginRecord(name=name, source=source, manifest=result.manifest, path=directory,
                          category=category, slot=SLOT_CATEGORIES.get(category, ""),
                          warnings=[f"{manifest_path}: {w}" for w in warnings])
    if result.error:
        record.error, record.error_code = str(result.error), result.error.code
    return record


def _provider_folder_record(directory: Path) -> PluginRecord:
    """A user folder with ``__init__.py`` and no plugin.yaml: the original's layout for a memory
    provider, loaded (by its folder name) when ``memory.provider`` selects it."""
    manifest = Manifest(name=directory.name, kind="exclusive",
                        description="memory provider folder (no plugin.yaml)", synthesized=True)
    return PluginRecord(name=directory.name, source="user", manifest=manifest, path=directory,
                        slot="memory")


def builtin_records(cache: ValidationCache | None) -> list[PluginRecord]:
    records = []
    for record in _scan_tree(builtin_dir(), "builtin", cache):
        record.module = f"hermes_agent.builtin_plugins.{record.path.name}"  # type: ignore[union-attr]
        records.append(record)
    return records


def _entry_point_records(cache: ValidationCache | None) -> list[PluginRecord]:
    records = []
    for facts in entry_point_facts(list(ENTRY_POINT_GROUPS), cache):
        name, slot = facts["name"], ENTRY_POINT_GROUPS[facts["group"]]
        ref = EntryPointRef(facts["group"], name, facts["value"], facts["dist_name"],
                            facts["dist_version"], facts["dist_stamp"])
        manifest, warnings, error = _entry_point_manifest(facts, cache)
        if slot and manifest and manifest.kind != "exclusive":
            manifest = Manifest(**{**manifest.__dict__, "kind": "exclusive"})
        if manifest and manifest.name != name:
            warnings.append(f"plugin.yaml names '{manifest.name}' but the entry point is "
                            f"'{name}'; the entry-point name is used")
        records.append(PluginRecord(name=name, source="entrypoint", manifest=manifest,
                                    entry_point=ref, slot=slot or "", warnings=warnings,
                                    error=str(error or ""),
                                    error_code=getattr(error, "code", "")))
    return records


def _entry_point_manifest(facts: EntryPointFacts, cache: ValidationCache | None
                          ) -> tuple[Manifest | None, list[str], Any]:
    if facts["manifest"]:
        path = Path(facts["manifest"])
        result = read_manifest(path, cache, default_name=facts["name"])
        warnings = [*result.warnings, *builtin_only_warnings(result.manifest, "entrypoint")]
        return result.manifest, [f"{path}: {w}" for w in warnings], result.error
    synthesized = Manifest(name=facts["name"], version=facts["dist_version"],
                           description=facts["summary"], author=facts["author"],
                           synthesized=True)
    return synthesized, [], None


def discover(home: Path, env: Mapping[str, str] | None = None, cwd: Path | None = None,
             cache: ValidationCache | None = None, entry_points: bool = True) -> Discovery:
    """Find every plugin. Reads manifests only; imports no plugin code."""
    env = os.environ if env is None else env
    by_source: list[list[PluginRecord]] = [
        builtin_records(cache),
        _scan_tree(bundled_dir(env), "bundled", cache),
        _scan_tree(home / "plugins", "user", cache),
    ]
    if env.get("HERMES_ENABLE_PROJECT_PLUGINS", "").strip().lower() in _TRUTHY:
        by_source.append(_scan_tree((cwd or Path.cwd()) / ".hermes" / "plugins", "project", cache))
    if entry_points:
        by_source.append(_entry_point_records(cache))
    return resolve_precedence(by_source)


def resolve_precedence(by_source: list[list[PluginRecord]]) -> Discovery:
    winners: dict[str, PluginRecord] = {}
    problems: list[PluginRecord] = []
    for records in by_source:
        seen: dict[str, list[PluginRecord]] = {}
        for record in records:
            seen.setdefault(record.name, []).append(record)
        for name, group in seen.items():
            if len(group) > 1:
                where = " and ".join(r.location for r in group)
                for record in group:
                    record.error_code = "duplicate"
                    record.error = (f"two {record.source} plugins are named '{name}' ({where}); "
                                    "rename one of them in its plugin.yaml")
                problems.extend(group)
                continue
            record = group[0]
            previous = winners.get(name)
            if previous is not None and previous.source == "builtin":
                record.error_code = "duplicate"
                record.error = (f"'{name}' is the name of a builtin plugin and cannot be reused; "
                                f"rename the plugin at {record.location}")
                problems.append(record)
                continue
            if previous is not None:
                record.shadows = [previous, *previous.shadows]
                previous.shadows = []
                winners.pop(name)
            winners[name] = record
    return Discovery(winners, problems)

"""What ``hermes --help`` lists, kept in ``$HERMES_HOME/cache/help-index.json``: a ``--help``
whose inputs have not changed reads that one file and imports none of the kernel's discovery,
config or policy modules; on a miss :mod:`.cli_commands` computes the table and it is stored.

An entry is used only while every input of the listing is as it was: the hermes version, the
home, ``sys.path`` with each entry's mtime (as the entry-point scan keys it), every
``HERMES_*`` variable, the variables the plugins require (``requires_env``) or config.yaml
names (``$VAR``), and the stat (mtime_ns, size, inode) of config.yaml, .env, plugins.lock,
each plugin folder discovery reads (and the folders around them) with its plugin.yaml, each
entry-point plugin's plugin.yaml and the source of the hermes modules that computed it.
Inputs outside hermes' own folders changed less than two seconds before are not stored: file
times are coarse, and a second change within one tick would go unseen.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from ..home import FILE_MODE, ValidationCache, hermes_home, path_stamp, private_dir, write_atomic

INDEX = Path("cache") / "help-index.json"
LEDGER = Path("cache") / "plugin-status.json"  # the load ledger (plugin_admin writes it)
HOME_FILES = ("config.yaml", ".env", "plugins.lock")
RACY_NS = 2_000_000_000  # a listing whose inputs changed this recently (ns) is not stored
Stamp = list[int]  # [mtime_ns, size, inode]; [] when the path does not exist


class HelpIndex:
    """The declared commands (name -> (help, plugin)), those whose plugin is off, and the
    plugins that would load (names and aliases)."""

    def __init__(self, home: Path, commands: dict[str, tuple[str, str]], off: set[str],
                 loading: set[str]):
        self.home, self.commands, self.off, self.loading = home, commands, off, loading

    @property
    def available(self) -> list[str]:
        return sorted(n for n in self.commands if n not in self.off)

    def added_last_run(self) -> dict[str, str]:
        """Commands plugins registered in code when they last loaded, read from the load
        ledger, for plugins that would still load: name -> plugin."""
        try:
            entries = json.loads((self.home / LEDGER).read_text("utf-8"))
        except (OSError, ValueError):
            return {}
        rows: dict[str, str] = {}
        for plugin, entry in entries.items() if isinstance(entries, dict) else ():
            if isinstance(entry, dict) and entry.get("state") == "loaded" \
                    and plugin in self.loading:
                for name in entry.get("cli_commands") or ():
                    if str(name) not in self.commands:
                        rows[str(name)] = plugin
        return dict(sorted(rows.items()))


def help_index(ctx: Any) -> HelpIndex:
    """The listing of this invocation: from the command table when a command was looked up
    already, else from the cache, else computed and stored."""
    meta = ctx.find_root().meta
    if "hermes.help" not in meta:
        table = meta.get("hermes.commands")
        meta["hermes.help"] = from_table(table) if table is not None else _cached(ctx)
    return meta["hermes.help"]


def from_table(table: Any) -> HelpIndex:
    """The listing of a :class:`.cli_commands.Commands` table."""
    records = table.found.plugins.values()
    loading = {n for r in records for n in (r.name, *r.aliases) if table.loads(n)}
    commands = {name: (c.help, c.record.name) for name, c in table.declared.items()}
    return HelpIndex(table.home, commands, set(table.off), loading)


def _cached(ctx: Any) -> HelpIndex:
    home = hermes_home()
    try:
        entry = json.loads((home / INDEX).read_text(encoding="utf-8"))
        if entry["key"] == _key(home, entry["vars"], entry["cwd"]) and \
                all(_stamp(path) == stamp for path, stamp in entry["watch"].items()):
            commands = {str(n): (str(h), str(p)) for n, (h, p) in entry["commands"].items()}
            return HelpIndex(home, commands, {str(n) for n in entry["off"]} & commands.keys(),
                             {str(n) for n in entry["loading"]})
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        pass  # missing, corrupt or of another shape: computed again and rewritten
    return _compute(ctx, home)


def _compute(ctx: Any, home: Path) -> HelpIndex:
    """Stamp the inputs, then compute the table (so a change meanwhile shows next time)."""
    from ..config import read_env_file
    from ..discovery import ENTRY_POINT_GROUPS, builtin_dir, bundled_dir, entry_point_facts
    from .cli_commands import current

    started = time.time_ns()
    watch = {str(home / name): _stamp(str(home / name)) for name in HOME_FILES}
    env = {**read_env_file(home / ".env"), **os.environ}
    project = "HERMES_ENABLE_PROJECT_PLUGINS" in env  # then discovery may read the cwd
    own: dict[str, Stamp] = {}  # hermes' own files, changed by installs (or a developer)
    _watch_tree(str(builtin_dir()), own)
    _watch_tree(str(bundled_dir(env)), watch if "HERMES_BUNDLED_PLUGINS" in env else own)
    _watch_tree(str(home / "plugins"), watch)
    if project:
        _watch_tree(str(Path.cwd() / ".hermes" / "plugins"), watch)
    cache = ValidationCache(home / "cache" / "validated.json")
    for facts in entry_point_facts(list(ENTRY_POINT_GROUPS), cache):
        if facts["manifest"]:
            watch[facts["manifest"]] = _stamp(facts["manifest"])
    cache.save()  # a first scan is not repeated by the table's discovery
    table = current(ctx)
    index = from_table(table)
    for path in _sources():
        own[path] = _stamp(path)
    names = sorted({req.name for r in table.found.plugins.values() if r.manifest
                    for req in r.manifest.requires_env} | _config_vars(home))
    if all(not s or s[0] < started - RACY_NS for s in watch.values()):
        try:
            entry = {"key": _key(home, names, project), "cwd": project, "vars": names,
                     "watch": {**own, **watch}, "commands": index.commands, "off": sorted(index.off),
                     "loading": sorted(index.loading)}
            private_dir(home / INDEX.parent)
            write_atomic(home / INDEX, json.dumps(entry, separators=(",", ":")), FILE_MODE)
        except OSError:
            pass  # a read-only home still lists its commands
    return index


def _key(home: Path, names: list[str], cwd: bool) -> str:
    """The version, home, sys.path and variables the listing depends on (values hashed)."""
    env = os.environ
    payload = json.dumps([str(home), os.getcwd() if cwd else "",
                          sorted((k, v) for k, v in env.items() if k.startswith("HERMES_")),
                          [(n, env.get(n)) for n in names]])
    return ValidationCache.key("help-index", payload.encode() + b"\n" + path_stamp(sys.path))


def _stamp(path: str) -> Stamp:
    try:
        st = os.stat(path)
    except OSError:
        return []
    return [st.st_mtime_ns, st.st_size, st.st_ino]


def _watch_tree(root: str, watch: dict[str, Stamp]) -> None:
    """Stamp what discovery reads under ``root``: the folder, each plugin (or category)
    folder in it, each plugin folder in a category, and their plugin.yaml. Adding or removing
    anything changes the mtime of a folder stamped here."""
    from ..manifest import find_manifest

    watch[root] = _stamp(root)
    for entry in _folders(root):
        watch[entry] = _stamp(entry)
        manifest = find_manifest(Path(entry))
        if manifest is not None:
            watch[str(manifest)] = _stamp(str(manifest))
            continue
        for sub in _folders(entry):
            watch[sub] = _stamp(sub)
            manifest = find_manifest(Path(sub))
            if manifest is not None:
                watch[str(manifest)] = _stamp(str(manifest))


def _folders(path: str) -> list[str]:
    """The folders in ``path`` discovery looks into (not hidden, not ``_private``)."""
    try:
        with os.scandir(path) as entries:
            return [e.path for e in entries if e.is_dir() and not e.name.startswith((".", "_"))]
    except OSError:
        return []


def _sources() -> list[str]:
    """The source files of the loaded kernel modules and of the CLI root's modules."""
    kernel = os.path.dirname(sys.modules["hermes_agent"].__file__ or "")
    here = os.path.dirname(__file__)
    files = []
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None) or ""
        folder = os.path.dirname(path)
        if name.startswith("hermes_agent") and (
                folder == kernel or (folder == here and os.path.basename(path).startswith("cli_"))):
            files.append(path)
    return sorted(files)


def _config_vars(home: Path) -> set[str]:
    """Names config.yaml refers to as ``$NAME`` or ``${NAME}`` (its expansion reads them)."""
    import re

    try:
        text = (home / "config.yaml").read_text(encoding="utf-8")
    except (OSError, ValueError):
        return set()
    return set(re.findall(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)", text))

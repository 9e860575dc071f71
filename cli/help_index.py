"""What ``hermes --help`` lists, kept in ``$HERMES_HOME/cache/help-index.json``: a ``--help``
whose inputs have not changed reads that one file and imports none of the kernel's discovery,
config or policy modules; on a miss :mod:`.commands` computes the table and it is stored.

An entry is used only while every input of the listing is as it was: the hermes version, the
home, ``sys.path`` with each entry's mtime (as the entry-point scan keys it), every
``HERMES_*`` variable, the variables the plugins require (``requires_env``) or config.yaml
names (``$VAR``), and the stat (mtime_ns, size, inode) of config.yaml, .env, plugins.lock,
each plugin folder discovery reads (and the folders around them) with its plugin.yaml, each
entry-point plugin's plugin.yaml and the source of the hermes modules that computed it.
Inputs outside hermes' own folders changed less than two seconds before are not stored: file
times are coarse, and a second change within one tick would go unseen. The file is sealed
(``seal_json``): one edited outside hermes is ignored and computed again.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from hermes_agent import ValidationCache, hermes_home, seal_json, unseal_json

INDEX = Path("cache") / "help-index.json"
PURPOSE = "help-index"  # what its seal says it is (kernel/seal.py)
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
    """The listing of a :class:`.commands.Commands` table."""
    records = table.found.plugins.values()
    loading = {n for r in records for n in (r.name, *r.aliases) if table.loads(n)}
    commands = {name: (c.help, c.record.name) for name, c in table.declared.items()}
    return HelpIndex(table.home, commands, set(table.off), loading)


def _cached(ctx: Any) -> HelpIndex:
    home = hermes_home()
    try:
        entry = unseal_json(PURPOSE, (home / INDEX).read_text(encoding="utf-8"), home / INDEX)
        if entry and entry["key"] == _key(home, entry["vars"], entry["cwd"]) and \
                all(_stamp(path) == stamp for path, stamp in entry["watch"].items()):
            commands = {str(n): (str(h), str(p)) for n, (h, p) in entry["commands"].items()}
            return HelpIndex(home, commands, {str(n) for n in entry["off"]} & commands.keys(),
                             {str(n) for n in entry["loading"]})
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        pass  # missing, corrupt, unsealed or of another shape: computed again and rewritten
    return _compute(ctx, home)


def _compute(ctx: Any, home: Path) -> HelpIndex:
    """Stamp the inputs, then compute the table (so a change meanwhile shows next time)."""
    from hermes_agent import discovery_inputs, read_env_file
    from hermes_agent import private_dir, write_atomic

    from .commands import current

    started = time.time_ns()
    watch = {str(home / name): _stamp(str(home / name)) for name in HOME_FILES}
    env = {**read_env_file(home / ".env"), **os.environ}
    project = "HERMES_ENABLE_PROJECT_PLUGINS" in env  # then discovery may read the cwd
    cache = ValidationCache(home / "cache" / "validated.json")
    shipped, installed = discovery_inputs(home, env, cache)
    cache.save()  # a first scan of the entry points is not repeated by the table's discovery
    own = {path: _stamp(path) for path in shipped}  # changed by installs (or a developer)
    watch.update((path, _stamp(path)) for path in installed)
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
            text = seal_json(PURPOSE, entry)
            if text is not None:  # without a cache key nothing is kept
                private_dir(home / INDEX.parent)
                write_atomic(home / INDEX, text, 0o600)
        except OSError:
            pass  # a read-only home still lists its commands
    return index


def _key(home: Path, names: list[str], cwd: bool) -> str:
    """The version, home, sys.path and variables the listing depends on (values hashed; the
    folders on sys.path are stamped with the inputs)."""
    env = os.environ
    payload = json.dumps([str(home), os.getcwd() if cwd else "", sys.path,
                          sorted((k, v) for k, v in env.items() if k.startswith("HERMES_")),
                          [(n, env.get(n)) for n in names]])
    return ValidationCache.key("help-index", payload.encode("utf-8", "surrogateescape"))


def _stamp(path: str) -> Stamp:
    try:
        st = os.stat(path)
    except OSError:
        return []
    return [st.st_mtime_ns, st.st_size, st.st_ino]


def _sources() -> list[str]:
    """The source files of the loaded kernel modules and of this package's modules."""
    kernel = os.path.dirname(sys.modules["hermes_agent"].__file__ or "")
    here = os.path.dirname(__file__)
    files = []
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None) or ""
        if name.startswith("hermes_agent") and os.path.dirname(path) in (kernel, here):
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

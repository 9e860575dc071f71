"""`hermes plugins remove NAME`: files (or the pip distribution), config entries, lock entry
and, unless ``--keep-data``, $HERMES_HOME/plugin-data/<name>. All or nothing.

A plugin loaded in this process is stopped first (``on_shutdown``). The pip dependencies
that nothing else installed needs are listed, and uninstalled with ``--with-deps`` or when
the person at the terminal agrees."""

from __future__ import annotations

import difflib
import os
import shutil
import sys
import tempfile
from pathlib import Path
from shlex import quote

import click

from hermes_agent import Kernel, PluginRecord, load_config, write_config_value

from .guards import check_plugin_name, dist_problem, refuse
from .install import normalize_dist
from .lockfile import Transaction, read_lock, write_lock
from .sources import pip, run
from .update import backup_dir

def unknown(kernel: Kernel, name: str) -> click.ClickException:
    known = sorted({*read_lock(kernel.home), *(r.name for r in kernel.discover().all_records())})
    close = [k for k in known if k.startswith(name) or name in k][:3]
    close += [c for c in difflib.get_close_matches(name, known, 3, 0.5) if c not in close]
    hint = f" Did you mean: {', '.join(close)}?" if close else ""
    return click.ClickException(f"no plugin named {name!r} is installed.{hint} "
                                "See `hermes plugins list`.")


def drop_from_config(kernel: Kernel, names: list[str]) -> list[str]:
    """Remove ``names`` from plugins.enabled/disabled, plugins.entries and the exclusive
    selections; returns what was changed."""
    config = load_config(kernel.home)
    changed = []
    for key, current in (("plugins.enabled", config.plugins_enabled or []),
                         ("plugins.disabled", config.plugins_disabled)):
        kept = [n for n in current if n not in names]
        if kept != current:
            write_config_value(kernel.home, key, kept)
            changed.append(key)
    entries = config.get("plugins.entries") or {}
    for name in names:
        if name in entries:
            write_config_value(kernel.home, f"plugins.entries.{name}", None, unset=True)
            changed.append(f"plugins.entries.{name}")
    # selections that name a plugin directly: a removed plugin must not stay selected
    for key in (info.config_key for info in config.slots.values() if info.enables):
        if config.get(key) in names:
            write_config_value(kernel.home, key, None, unset=True)
            changed.append(key)
    return changed


def remove(kernel: Kernel, name: str, *, keep_data: bool, with_deps: bool = False,
           no_input: bool = False) -> None:
    lock = read_lock(kernel.home)
    locked = lock.get(name)
    record = kernel.discover().get(name) or next(
        (r for r in kernel.discover().problems if r.name == name), None)
    if record is None and locked is None:
        raise unknown(kernel, name)
    if record is not None:
        name = record.name
        locked = locked or lock.get(name)  # NAME was an alias
        _check_removable(kernel, record)
        # an entry point's name is not checked on discovery; it names folders deleted below
        check_plugin_name(name, f"the {record.source} plugin at {record.location}",
                          "nothing was removed; uninstall its package with pip")
    entry = locked.fields("remove") if locked is not None else {}
    dist = entry.get("dist") or ""
    if not dist and record is not None and record.entry_point:  # installed metadata
        dist = record.entry_point.dist_name
        if problem := dist_problem(dist):
            raise refuse(f"{name} comes from a package whose name {problem}; nothing was "
                         "removed. Uninstall that package with pip by hand")
    names = [name]
    if dist:  # one distribution may provide several plugins; they all go
        names += [n for n, e in lock.items() if n != name and isinstance(e.peek("dist"), str)
                  and normalize_dist(e.peek("dist")) == normalize_dist(dist)]
    for other in names[1:]:  # read_lock checked them; a bad one stops the removal
        lock[other].fields("remove")
    folder = (record.path if record is not None and record.source == "user"
              else Path(entry["path"]) if entry.get("path") else None)
    orphans = _orphans(dist) if dist else []
    for other in names:  # loaded in this process: stop it before its files go (a removal
        # that fails after this leaves its files in place; it loads again in the next session)
        status = kernel.plugins.get(other)
        if status is not None and status.state == "loaded":
            kernel.unregister_plugin(other)
    with Transaction(kernel.home) as txn:
        changed = drop_from_config(kernel, [*names, *(record.aliases if record else ())])
        for other in names:
            lock.pop(other, None)
        write_lock(kernel.home, lock)
        if folder is not None and folder.exists():
            _park(kernel.home, folder, txn)
        for other in names:
            if backup_dir(kernel.home, other).exists():
                _park(kernel.home, backup_dir(kernel.home, other), txn)
        if dist:
            run(pip("uninstall", "-y", "-q", dist), f"pip uninstall {dist}")
    for other in names:
        data = kernel.home / "plugin-data" / other
        if data.exists() and not keep_data:
            shutil.rmtree(data)
        click.echo(f"✓ Removed {other}" + (f" (pip distribution {dist})" if dist else "")
                   + (f"; its data is kept in {data}" if keep_data and data.exists() else ""))
    if changed:
        click.echo(f"  config.yaml: removed {', '.join(changed)}")
    if orphans:
        _offer_orphans(dist, orphans, with_deps=with_deps, no_input=no_input)


def _orphans(dist: str) -> list[str]:
    from .orphans import orphaned_dependencies

    return orphaned_dependencies([dist])


def _offer_orphans(dist: str, orphans: list[str], *, with_deps: bool, no_input: bool) -> None:
    """Uninstall the dependencies only ``dist`` needed: with ``--with-deps``, or when the person
    at the terminal says yes; otherwise only name them and the command that would do it."""
    listed = ", ".join(orphans)
    ask = not with_deps and not no_input and sys.stdin.isatty()
    if with_deps or (ask and click.confirm(f"  {dist} needed {listed}, which nothing else "
                                           "installed needs. Uninstall them too?", default=False)):
        run(pip("uninstall", "-y", "-q", *orphans), f"pip uninstall {' '.join(orphans)}")
        click.echo(f"✓ Uninstalled dependencies nothing else needs: {listed}")
        return
    command = " ".join(quote(part) for part in (sys.executable, "-m", "pip", "uninstall", "-y",
                                                *orphans))
    click.echo(f"  Dependencies of {dist} that nothing else installed needs: {listed}\n"
               f"  Uninstall them with `{command}` (or pass --with-deps to remove)")


def _check_removable(kernel: Kernel, record: PluginRecord) -> None:
    if record.source in ("builtin", "bundled"):
        raise click.ClickException(f"{record.name} ships with hermes ({record.source}) and cannot "
                                   "be removed; turn it off with "
                                   f"`hermes plugins disable {quote(record.name)}`")
    if record.source == "project":
        raise click.ClickException(f"{record.name} is a project plugin ({record.location}); delete "
                                   "that folder in the project, or disable it")
    if record.source == "user":
        plugins = (kernel.home / "plugins").resolve()
        if record.path is None or not record.path.resolve().is_relative_to(plugins):
            raise click.ClickException(f"{record.location} is not inside {plugins}; remove it by hand")


def _park(home: Path, folder: Path, txn: Transaction) -> None:
    """Move ``folder`` aside; it is deleted when the transaction succeeds, restored otherwise."""
    parked = Path(tempfile.mkdtemp(prefix=".removed-", dir=home)) / "tree"
    os.replace(folder, parked)
    txn.on_failure(lambda: os.replace(parked, folder))
    txn.on_success(lambda: shutil.rmtree(parked.parent, ignore_errors=True))

"""`hermes plugins update [NAME | --all]` and `hermes plugins rollback NAME`.

An update fetches the plugin again from its locked source (or ``--from SPEC``), validates
it, shows the capability diff and asks for consent again when the plugin would be able to do
more (new tools, hooks, required env vars, dependencies, or another kind). The lock entry keeps
the last HISTORY replaced versions (``history``, newest first); directory installs keep their
files in $HERMES_HOME/plugin-backups/<name>/<slot>, pip installs are rolled back by
reinstalling the recorded wheel or version. Each rollback steps one version further back.
$HERMES_HOME/plugin-data/<name> is never touched.
"""

from __future__ import annotations

import os
import secrets
import shutil
import tempfile
import time
from pathlib import Path
from shlex import quote
from typing import Any

import click
from hermes_agent import Kernel, private_dir
from hermes_agent.kits.files import set_env_values

from .envfile import prompt_missing_env
from .install import describe, pip_install
from .lockfile import (
    BACKUPS,
    Transaction,
    capabilities,
    diff_capabilities,
    make_entry,
    read_lock,
    write_lock,
)
from .sources import Candidate, Source, classify, fetch, pip, run

HISTORY = 3  # versions kept for rollback, besides the current one


def backup_dir(home: Path, name: str) -> Path:
    return home / BACKUPS / name


def _source_for_update(entry: dict[str, Any], from_spec: str | None) -> Source:
    if from_spec:
        return classify(from_spec)
    kind = entry["source"]
    if kind == "git":
        return Source("git", entry["spec"], entry["url"], entry.get("subdirectory", ""),
                      entry.get("ref", ""))
    if kind == "path":
        return classify(entry["spec"])
    spec = entry["spec"]
    if Path(spec.partition("#")[0]).exists():
        return classify(spec)  # a wheel, sdist or package folder: build it again
    return Source("pip", spec, entry.get("dist") or spec)  # a requirement: the newest allowed


def _locked(kernel: Kernel, name: str, doing: str) -> dict[str, Any]:
    """The plugin's lock entry, to ``doing`` it; read_lock checked it (a bad one is refused)."""
    lock = read_lock(kernel.home)
    if name in lock:
        return lock[name].fields(doing)
    import difflib

    close = difflib.get_close_matches(name, list(lock), 3, 0.5)
    hint = f" Did you mean: {', '.join(close)}?" if close else ""
    raise click.ClickException(
        f"{name!r} is not in {kernel.home / 'plugins.lock'}, so hermes does not know where it came "
        f"from.{hint} Plugins installed with `hermes plugins install` can be updated; "
        "reinstall this one that way.")


def update(kernel: Kernel, name: str, *, from_spec: str | None, dry_run: bool, yes: bool,
           no_input: bool, allow_build: bool = False) -> bool:
    """Update one plugin. Returns True when something changed (or would, with --dry-run)."""
    entry = _locked(kernel, name, "update")
    source = _source_for_update(entry, from_spec)
    movable = {source.kind, entry["source"]} <= {"path", "git"}  # a folder may become a repo
    if source.kind != entry["source"] and not (from_spec and movable):
        raise click.ClickException(f"{name} was installed with {entry['source']}; --from must be "
                                   f"the same kind of source, not {source.kind}")
    scratch = Path(tempfile.mkdtemp(prefix="hermes-update-"))
    try:
        candidates = [c for c in fetch(source, scratch, allow_build=allow_build)
                      if c.name == name]
        if not candidates:
            raise click.ClickException(f"{source.spec} no longer provides a plugin named {name!r}")
        new = candidates[0]
        version = new.manifest.version or new.commit[:12]
        if new.files_digest == entry.get("files_digest") and not from_spec:
            click.echo(f"{name} is up to date ({version or 'no version'}).")
            return False
        lines, grows = diff_capabilities(entry.get("capabilities", {}), capabilities(new.manifest))
        click.echo(f"Update {name}: {entry.get('version') or entry.get('commit', '')[:12] or '?'} "
                   f"-> {version or '?'}")
        click.echo("\n".join(describe(new)))
        click.echo("Capability changes:\n  " + ("\n  ".join(lines) if lines else "none"))
        if dry_run:
            click.echo("Dry run: nothing was changed.")
            return True
        if grows and not yes:
            if no_input:
                raise click.ClickException(f"the update gives {name} new capabilities; review "
                                           "them above and re-run with --yes to accept")
            from hermes_agent.kits.cli import confirm_at_terminal

            if not confirm_at_terminal("This update lets the plugin do more. Accept it?",
                                       "review them above and re-run with --yes to accept"):
                raise click.ClickException(f"update of {name} declined; nothing was changed")
        env_values = prompt_missing_env(new.manifest.requires_env, kernel.env,
                                        kernel.home / ".env", no_input)
        with Transaction(kernel.home) as txn:
            _replace(kernel, name, entry, new, txn)
            set_env_values(kernel.home / ".env", env_values)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    click.echo(f"✓ Updated {name} to {version or 'the new files'}. It loads in the next session.")
    return True


def _replace(kernel: Kernel, name: str, entry: dict[str, Any], new: Candidate,
             txn: Transaction) -> None:
    extra: dict[str, Any] = {}
    replaced = {k: v for k, v in entry.items() if k not in ("history", "rolled_back")}
    if new.directory is not None:
        dest = Path(entry.get("path") or kernel.home / "plugins" / name)
        slot = swap_in(kernel.home, name, dest, new.directory, txn)
        if slot is not None:
            replaced["backup"] = str(slot)
        extra["path"] = str(dest)
    else:
        same = new.dist_version == entry.get("dist_version")
        pip_install(new, txn, "--upgrade", *(["--force-reinstall", "--no-deps"] if same else []))
    history = [replaced, *entry.get("history", [])]
    for dropped in history[HISTORY:]:  # the oldest falls off; so do its saved files
        if dropped.get("backup"):
            txn.on_success(lambda b=dropped["backup"]: shutil.rmtree(b, ignore_errors=True))
    updated = make_entry(source=new.source.kind, spec=new.source.spec, manifest=new.manifest,
                         files_digest=new.files_digest, history=history[:HISTORY],
                         **new.lock_extra(), **extra)
    write_lock(kernel.home, read_lock(kernel.home), {name: updated})


def swap_in(home: Path, name: str, dest: Path, new_tree: Path, txn: Transaction) -> Path | None:
    """Move the installed files to a new backup slot and the new ones into place; returns the
    slot, $HERMES_HOME/plugin-backups/<name>/<time>-<id> (None when nothing was installed)."""
    from .install import COPY_IGNORE

    root = private_dir(backup_dir(home, name))
    slot = root / f"{time.strftime('%Y%m%dT%H%M%S')}-{secrets.token_hex(3)}"
    staging = Path(tempfile.mkdtemp(prefix=f".staging-{name}-", dir=dest.parent))
    try:
        shutil.copytree(new_tree, staging / "tree", ignore=COPY_IGNORE)
        if dest.exists():
            os.replace(dest, slot)
        os.replace(staging / "tree", dest)
    except BaseException:
        _put_back(dest, slot)
        raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    txn.on_failure(lambda: _put_back(dest, slot))
    return slot if slot.exists() else None


def _put_back(dest: Path, slot: Path) -> None:
    """Undo a swap: the files saved in ``slot`` return to ``dest``."""
    if slot.exists():
        shutil.rmtree(dest, ignore_errors=True)
        os.replace(slot, dest)


def rollback(kernel: Kernel, name: str) -> None:
    """Return to the version the last update replaced. Repeated rollbacks walk further back
    (plugins.lock keeps HISTORY versions); the version rolled back from is forgotten."""
    entry = _locked(kernel, name, "roll back")
    history = entry.get("history") or []
    if not history:
        current = entry.get("version") or entry.get("commit", "")[:12] or "its current files"
        if entry.get("rolled_back"):
            raise click.ClickException(
                f"{name} is at {current}, the oldest version plugins.lock still records; there is "
                f"nothing older to roll back to (the lock keeps the {HISTORY} versions before "
                f"the current one). `hermes plugins update {quote(name)}` returns to the newest.")
        raise click.ClickException(f"no previous version of {name} is recorded in plugins.lock "
                                   "(rollback works after an update)")
    previous, older = history[0], history[1:]
    lines, _ = diff_capabilities(entry.get("capabilities", {}), previous.get("capabilities", {}))
    with Transaction(kernel.home) as txn:
        if entry["source"] in ("path", "git"):
            dest = Path(entry.get("path") or kernel.home / "plugins" / name)
            backup = Path(previous.get("backup", ""))
            if not previous.get("backup") or not backup.is_dir():
                raise click.ClickException(f"the previous files of {name} are gone "
                                           f"({previous.get('backup') or 'never saved'}); "
                                           f"reinstall it from {previous.get('spec')}")
            parked = Path(tempfile.mkdtemp(prefix=f".rollback-{name}-", dir=kernel.home)) / "tree"
            if dest.exists():
                os.replace(dest, parked)
            os.replace(backup, dest)

            def undo() -> None:  # the restored files go back to their slot
                os.replace(dest, backup)
                if parked.exists():
                    os.replace(parked, dest)
            txn.on_failure(undo)
            txn.on_success(lambda: shutil.rmtree(parked.parent, ignore_errors=True))
        else:
            spec = previous.get("spec", "")
            pinned = f"{previous['dist']}=={previous['dist_version']}"
            target = spec if Path(spec).is_file() else pinned
            run(pip("install", "-q", "--force-reinstall", "--no-deps", target),
                f"pip install {target}")
        restored = {k: v for k, v in previous.items() if k != "backup"}
        write_lock(kernel.home, read_lock(kernel.home),
                   {name: {**restored, "history": older, "rolled_back": True}})
    label = previous.get("version") or previous.get("commit", "")[:12]
    click.echo(f"✓ Rolled {name} back to {label or 'its previous files'}.")
    if lines:
        click.echo("Capability changes:\n  " + "\n  ".join(lines))
    if older:
        click.echo(f"  {len(older)} older version(s) recorded; `hermes plugins rollback {quote(name)}` "
                   "goes back further.")
    else:
        click.echo("  This is the oldest version recorded; nothing older to roll back to.")

"""`hermes memory edit [memory|user]`: edit a memory file in the user's editor, safely.

The editor works on a private copy. When it exits, the copy is checked as the memory tool
checks writes (UTF-8 text, within the limit, no prompt injection in new or changed entries);
then, under the file's lock, the file is replaced only if nobody wrote it meanwhile. Whatever
is refused, the edit is kept in the copy and the message says where, so nothing typed is lost.
"""

from __future__ import annotations

import os
from pathlib import Path

import click
from hermes_agent import HermesError
from hermes_agent.kits.secret_text import find_secret
from hermes_agent.kits.cli import cli_kernel
from hermes_agent.kits.editor import run_editor

from . import BuiltinMemory, memory_file
from .tool import Refused
from .store import FILE_MODE, MemoryFile, State, usage


def _copy_path(store: MemoryFile) -> Path:
    return store.folder / f"{store.target.filename}.edit"


def _problems(store: MemoryFile, edited: State, before: State, memory: BuiltinMemory) -> list[str]:
    if edited.problem:
        return [edited.problem.split(". It is left")[0]]
    problems = []
    for number, entry in enumerate(edited.entries, start=1):
        if any(line.strip() == "§" for line in entry.splitlines()):
            problems.append("an entry holds a line with only '§' (the separator)")
        if entry not in before.entries and (kind := find_secret(entry)) is not None:
            problems.append(f"entry {number} looks like it holds {kind}, and memory is shown "
                            "in every later system prompt (keep the secret in "
                            "$HERMES_HOME/.env with `hermes config set NAME VALUE` and note "
                            "only where it is)")
            continue
        if entry not in before.entries:
            findings = memory.scan(entry)
            if findings:
                problems.append(f"entry {entry[:60]!r} looks like a prompt injection "
                                f"({', '.join(findings)})")
    return problems


def run_edit(target: str) -> None:
    kernel = cli_kernel()
    store = memory_file(kernel, target)
    copy = _copy_path(store)
    before_bytes = store.path.read_bytes() if store.path.exists() else b""
    before = store.read()
    if before.problem and not copy.exists():
        click.echo(f"Note: {before.problem}", err=True)
    if copy.exists():
        click.echo(f"Resuming the edit kept at {copy}.", err=True)
    else:
        store.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        copy.write_bytes(before_bytes)
        os.chmod(copy, FILE_MODE)
    try:
        code = run_editor(copy)
    except HermesError as exc:
        raise HermesError(f"{exc}. Your file is unchanged; the copy is at {copy}") from exc
    if code != 0:
        raise HermesError(f"the editor exited with status {code}; nothing was saved. The copy "
                          f"is kept at {copy}; run the command again to go on with it")
    edited = MemoryFile(store.folder, store.target)
    edited.path = copy
    state = edited.read()
    try:
        problems = _problems(store, state, before, BuiltinMemory(kernel))
    except Refused as exc:  # the injection scan is unavailable: nothing unchecked is saved
        raise HermesError(f"{exc} Your edit is kept at {copy}.") from exc
    if problems:
        raise HermesError("the edit was not saved: " + "; ".join(problems) + f". It is kept at "
                          f"{copy}; run `hermes memory edit {target}` again to fix it")
    with store.locked():
        now = store.path.read_bytes() if store.path.exists() else b""
        if now != before_bytes:
            raise HermesError(f"{store.path} changed while you were editing (the agent wrote to "
                              f"it); your edit was not saved and is kept at {copy}. Run "
                              f"`hermes memory edit {target}` to merge it")
        store.write(list(state.entries))
    copy.unlink()
    changed = "unchanged" if state.entries == before.entries else "saved"
    click.echo(f"{store.path} {changed}: {len(state.entries)} entries, "
               f"{usage(state.used, store.target.limit)}. New sessions see it.")

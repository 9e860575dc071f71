"""The file tools' side of the sandbox boundary (:mod:`.sandbox.policy`): ``write_file`` and
``patch`` write only under the writable roots, ``read_file`` and ``search_files`` never reach a
hidden path (``$HERMES_HOME``, the credential folders, ``sandbox.hidden_paths``).

A path is walked one component at a time from a held descriptor of ``/`` (openat semantics):
each folder is opened with ``O_NOFOLLOW | O_DIRECTORY`` relative to its parent's descriptor,
a symlink met on the way is read (``readlink`` on the parent's descriptor) and its target
walked the same way, and ``..`` goes back to the folder actually walked through. So the path
judged is the one used: a link swapped while the walk runs either is seen as a link (and its
target judged) or is not followed at all, and the file is opened or replaced relative to the
descriptor of the folder that was judged.

Hard links: a write never changes a file in place, it replaces the name in the judged folder
(a temporary file and a rename), so a hard link in the workspace to a file outside cannot
carry a write out. A read of a regular file with more than one name is refused when its inode
is one of the hidden files' (the hidden trees are indexed by inode), or when a hidden tree on
its device was too large to index (then its other names cannot be vouched for)."""

from __future__ import annotations

import errno
import os
import stat
import sys
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .sandbox.policy import SandboxPolicy, policy_for

MAX_LINKS = 40  # as the kernel's ELOOP limit
MAX_INDEXED = 50_000  # files of the hidden trees indexed by inode (per policy, cached 1 s)
_DELETED = " (deleted)"
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW | _CLOEXEC
READ_FLAGS = (os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | _NOFOLLOW | _CLOEXEC)


class OutOfBounds(Exception):
    """The path leaves what the policy lets this tool reach; the message says what to do."""


def default_policy(cwd: Path) -> SandboxPolicy:
    """The policy of a caller that passed none (a direct call): the defaults, never off."""
    from .danger.paths import current_hermes_home

    home = current_hermes_home() or os.path.join(os.environ.get("HOME") or "~", ".hermes")
    return policy_for({}, cwd, Path(os.path.expanduser(home)))


# --- the reasons --------------------------------------------------------------------------

def _hidden_root(policy: SandboxPolicy, path: Path) -> Path:
    return next(h for h in policy.hidden if path == h or h in path.parents)


def hidden_reason(raw: str, policy: SandboxPolicy, real: Path) -> str:
    root = _hidden_root(policy, real)
    via = f" (it leads to {real})" if str(real) != raw else ""
    return (f"{raw} is in {root}{via}, which the file tools cannot reach: hermes's home "
            "($HERMES_HOME), the credential folders (~/.ssh, ~/.aws, ...) and "
            "sandbox.hidden_paths are hidden from the agent. Ask the user to paste the part "
            "that is needed; the memory and skill tools keep hermes's own files.")


def write_reason(raw: str, policy: SandboxPolicy, real: Path) -> str | None:
    """Why the file whose real path is ``real`` is not written, or None."""
    if policy.is_hidden(real):
        return hidden_reason(raw, policy, real)
    if policy.may_write(real):
        return None
    if policy.workspace is None and not policy.writable:
        return (f"{raw} ({real}) is not written: this session has no workspace "
                f"({policy.why_no_workspace}). Ask the user to start hermes in the project's "
                "folder, or to add a folder to terminal.writable_paths in config.yaml.")
    roots = ", ".join(str(root) for root in policy.writable)
    none = f" This session has no workspace ({policy.why_no_workspace})." \
        if policy.workspace is None else ""
    return (f"{raw} is outside the workspace ({real}); writable: {roots}.{none} Write inside "
            "the workspace, or ask the user to add the folder to terminal.writable_paths in "
            "config.yaml (or to set sandbox.mode: off).")


def precheck_write(raw: str, policy: SandboxPolicy, path: Path) -> str | None:
    """Refusal judged on the path's current real path, before anything is opened (the walk
    judges again as it opens)."""
    return write_reason(raw, policy, Path(os.path.realpath(path)))


def precheck_read(raw: str, policy: SandboxPolicy, path: Path) -> str | None:
    for candidate in (Path(os.path.abspath(path)), Path(os.path.realpath(path))):
        if policy.is_hidden(candidate):
            return hidden_reason(raw, policy, candidate)
    return None


# --- the walk -----------------------------------------------------------------------------

@dataclass
class Walked:
    """Where a walk ended: the descriptor of the real folder, its path, the last name (not a
    symlink when looked at), and for a read the open file."""

    folder: int
    folder_path: Path
    name: str
    file: int | None = None

    @property
    def real(self) -> Path:
        return self.folder_path / self.name


@contextmanager
def walked(path: Path, raw: str, policy: SandboxPolicy, *, write: bool,
           create_folders: bool = False) -> Iterator[Walked]:
    """``path`` walked from ``/`` (see the module's doc). For a write, the last name's folder
    (missing folders made when ``create_folders``, each only where writable); for a read, the
    file opened (``READ_FLAGS``). :class:`OutOfBounds` when a step leaves the policy,
    ``OSError`` as the kernel's."""
    stack: list[tuple[int, Path]] = [(os.open("/", _DIR_FLAGS & ~_NOFOLLOW), Path("/"))]
    opened: int | None = None
    result: Walked | None = None
    try:
        parts = deque(str(path.absolute()).split("/"))  # ".." kept: walked, not normalised
        links = 0
        while True:
            while parts and parts[0] in ("", "."):
                parts.popleft()
            if not parts:  # "/" itself, or a path ending in ".."
                raise IsADirectoryError(errno.EISDIR, "Is a directory", raw)
            name = parts.popleft()
            if name == "..":
                if len(stack) > 1:
                    os.close(stack.pop()[0])
                continue
            folder, where = stack[-1]
            child = where / name
            if policy.is_hidden(child):
                raise OutOfBounds(hidden_reason(raw, policy, child))
            last = not any(p not in ("", ".") for p in parts)
            try:
                if last and not write:
                    opened = os.open(name, READ_FLAGS, dir_fd=folder)
                elif last:
                    if not stat.S_ISLNK(_lstat(name, folder)):
                        break
                    raise OSError(errno.ELOOP, "a symlink", name)
                else:
                    stack.append((os.open(name, _DIR_FLAGS, dir_fd=folder), child))
                    continue
            except OSError as exc:
                links += 1  # every step taken again counts: a folder removed as it is made, too
                if links > MAX_LINKS:
                    raise OSError(errno.ELOOP, "Too many levels of symbolic links", raw) \
                        from None
                if exc.errno == errno.ENOENT and create_folders and not last:
                    if (why := write_reason(raw, policy, child)) is not None:
                        raise OutOfBounds(why) from None
                    try:
                        os.mkdir(name, 0o777, dir_fd=folder)
                    except FileExistsError:
                        pass
                    parts.appendleft(name)
                    continue
                if exc.errno not in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
                    raise
                if not stat.S_ISLNK(_lstat(name, folder)):
                    raise
                try:
                    target = os.readlink(name, dir_fd=folder)
                except OSError:  # swapped back to a file meanwhile: look again
                    parts.appendleft(name)
                    continue
                if target.startswith("/"):
                    for fd, _ in stack[1:]:
                        os.close(fd)
                    del stack[1:]
                parts.extendleft(reversed(target.split("/")))
                continue
            break
        folder, where = stack[-1]
        result = Walked(folder, where, name, opened)
        if write and (why := write_reason(raw, policy, result.real)) is not None:
            raise OutOfBounds(why)
        _same_folder(folder, where, raw)
        yield result
    finally:
        if opened is not None and (result is None or result.file is not None):
            os.close(opened)  # unless the caller took it (set ``file`` to None)
        for fd, _ in stack:
            os.close(fd)


def _lstat(name: str, folder: int) -> int:
    try:
        return os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode
    except FileNotFoundError:
        return 0


def _same_folder(folder: int, where: Path, raw: str) -> None:
    """A folder renamed while it was walked: the walk's path no longer names it."""
    now = fd_path(folder)
    if now is not None and now != str(where):
        raise OutOfBounds(f"a folder on the way to {raw} was moved while it was opened "
                          f"({where} is now {now}); nothing was done, try again.")


def fd_path(fd: int) -> str | None:
    """The real path of an open descriptor, or None where the system cannot tell."""
    if sys.platform.startswith("linux"):
        try:
            where = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            return None
        where = where[:-len(_DELETED)] if where.endswith(_DELETED) else where
        return where if where.startswith("/") else None
    if sys.platform == "darwin":
        import fcntl

        try:
            raw = fcntl.fcntl(fd, 50, b"\0" * 1024)  # F_GETPATH
        except OSError:
            return None
        return raw.split(b"\0", 1)[0].decode("utf-8", "surrogateescape") or None
    return None


# --- hard links ---------------------------------------------------------------------------

_Index = tuple[frozenset[tuple[int, int]], frozenset[int]]  # (dev, ino) seen; devs not finished
_index: tuple[float, tuple[Path, ...], _Index] | None = None


def hidden_link_reason(raw: str, policy: SandboxPolicy, info: os.stat_result) -> str | None:
    """Why a file (``info``: its fstat) with another name in a hidden path is not read."""
    if not policy.confined or info.st_nlink < 2 or not stat.S_ISREG(info.st_mode):
        return None
    inodes, unfinished = _hidden_inodes(policy.hidden)
    if (info.st_dev, info.st_ino) in inodes:
        return (f"{raw} is another name (a hard link) of a file in a hidden path "
                "($HERMES_HOME, the credential folders or sandbox.hidden_paths), which the file "
                "tools cannot reach; it is not read. Ask the user to paste the part that is "
                "needed.")
    if info.st_dev in unfinished:
        return (f"{raw} has {info.st_nlink} names (hard links) and a hidden path on its disk "
                f"has more than {MAX_INDEXED:,} files, so its other names cannot be checked; "
                "it is not read. Copy it (cp) and read the copy.")
    return None


def _hidden_inodes(hidden: tuple[Path, ...]) -> _Index:
    global _index
    now = time.monotonic()
    if _index is not None and _index[1] == hidden and now - _index[0] < 1.0:
        return _index[2]
    seen: set[tuple[int, int]] = set()
    unfinished: set[int] = set()
    for root in hidden:
        try:
            top = os.stat(root, follow_symlinks=False)
        except OSError:
            continue
        budget = MAX_INDEXED
        pending = [str(root)] if stat.S_ISDIR(top.st_mode) else []
        if stat.S_ISREG(top.st_mode):
            seen.add((top.st_dev, top.st_ino))
        while pending and budget > 0:
            try:
                entries = list(os.scandir(pending.pop()))
            except OSError:
                continue
            for entry in entries:
                budget -= 1
                try:
                    info = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                if stat.S_ISDIR(info.st_mode):
                    pending.append(entry.path)
                elif stat.S_ISREG(info.st_mode) and info.st_nlink > 1:
                    seen.add((info.st_dev, info.st_ino))
        if pending or budget <= 0:
            unfinished.add(top.st_dev)
    found = (frozenset(seen), frozenset(unfinished))
    _index = (now, hidden, found)
    return found


# --- the search's policy across a process ---------------------------------------------------

def policy_to_json(policy: SandboxPolicy) -> dict[str, Any]:
    return {"mode": policy.mode, "workspace": str(policy.workspace) if policy.workspace else None,
            "writable": [str(p) for p in policy.writable],
            "hidden": [str(p) for p in policy.hidden], "network": policy.network,
            "why_no_workspace": policy.why_no_workspace}


def policy_from_json(data: dict[str, Any]) -> SandboxPolicy:
    workspace = data.get("workspace")
    return SandboxPolicy(data["mode"], Path(workspace) if workspace else None,
                         tuple(Path(p) for p in data["writable"]),
                         tuple(Path(p) for p in data["hidden"]), bool(data["network"]),
                         data.get("why_no_workspace", ""))

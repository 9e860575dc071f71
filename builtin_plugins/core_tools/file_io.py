"""Opening and replacing files for the file tools so that what is checked is what is used.

A file is opened first and judged by the open descriptor (its real path as the kernel names
it, its type, its inode), so a link swapped between a check and the open cannot hand over
another file, and a device or named pipe is never read (nor waited on). A file is replaced in
the folder it was checked in, through that folder's descriptor."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import BinaryIO

from .boundary import (OutOfBounds, fd_path, hidden_link_reason, hidden_reason, precheck_read,
                       walked)
from .sandbox.policy import SandboxPolicy
from .secrets import holds_secret, is_secret_real, refusal, secret_hard_link

class Refused(Exception):
    """The file is not used; the message is the tool's error, saying what to do instead."""


def _open_confined(path: Path, raw: str, policy: SandboxPolicy) -> int:
    """``path`` opened for reading by a walk that never enters a hidden path."""
    if (why := precheck_read(raw, policy, path)) is not None:
        raise Refused(refusal(raw, path) if holds_secret(path) else why)
    try:
        with walked(path, raw, policy, write=False) as where:
            fd, where.file = where.file, None
    except OutOfBounds as out:
        raise Refused(str(out)) from None
    assert fd is not None
    return fd


def open_regular(path: Path, raw: str,
                 policy: SandboxPolicy | None = None) -> tuple[BinaryIO, str]:
    """``path`` opened for reading, and its real path; :class:`Refused` when it is not a
    regular file, holds secrets or (under a confining ``policy``) is hidden. ``OSError``
    (``FileNotFoundError``...) as ``os.open``."""
    if policy is not None and policy.confined:
        fd = _open_confined(path, raw, policy)
    else:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0)
                     | getattr(os, "O_CLOEXEC", 0))
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(21, "Is a directory", str(path))
        if not stat.S_ISREG(info.st_mode):
            raise Refused(f"{raw} is not a regular file (a device, named pipe or socket); the "
                          "file tools read and edit regular files only.")
        real = fd_path(fd)
        if real is None:  # no way to ask the descriptor: the resolved path must be this file
            real = str(path.resolve())
            other = os.stat(real)
            if (other.st_ino, other.st_dev) != (info.st_ino, info.st_dev):
                raise Refused(f"{raw} changed while it was opened; try again.")
        link_of = secret_hard_link(info)
        named = str(path.absolute())
        if is_secret_real(real) or (named != real and is_secret_real(named)) or link_of:
            raise Refused(refusal(raw, path, real, link_of))
        if policy is not None and policy.confined:
            if policy.is_hidden(Path(real)):
                raise Refused(hidden_reason(raw, policy, Path(real)))
            if (why := hidden_link_reason(raw, policy, info)) is not None:
                raise Refused(why)
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb"), real
    except BaseException:
        os.close(fd)
        raise


def _umask() -> int:
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)  # where /proc cannot tell (briefly changes it for the process)
    os.umask(mask)
    return mask


def replace_text(real: Path, text: str, raw: str, policy: SandboxPolicy | None = None) -> None:
    """Write ``text`` to ``real`` (a path whose folder has no symlinks left) via a temporary
    file and a rename inside that folder's descriptor. An existing file keeps its mode; a
    new one gets the usual mode under the umask. Under a confining ``policy`` the folder is
    reached by a walk (:func:`.boundary.walked`) and must be writable."""
    if policy is not None and policy.confined:
        try:
            with walked(real, raw, policy, write=True) as where:
                replace_in(where.folder, where.name, text)
        except OutOfBounds as out:
            raise Refused(str(out)) from None
        return
    folder = os.open(real.parent, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0)
                     | getattr(os, "O_CLOEXEC", 0))
    try:
        where = fd_path(folder)
        if where is not None and where != str(real.parent):
            raise Refused(f"the folder of {raw} changed while it was written ({real.parent} "
                          f"now leads to {where}); nothing was written, try again.")
        replace_in(folder, real.name, text)
    finally:
        os.close(folder)


def replace_in(folder: int, name: str, text: str) -> None:
    """``name`` in the folder open as ``folder`` replaced by a new file holding ``text`` (a
    link or a hard link at ``name`` is replaced, never written through)."""
    try:
        old = os.stat(name, dir_fd=folder, follow_symlinks=False)
    except FileNotFoundError:
        old = None
    mode = stat.S_IMODE(old.st_mode) if old is not None and stat.S_ISREG(old.st_mode) \
        else 0o666 & ~_umask()
    tmp = f".{name}.{os.urandom(6).hex()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
                 | getattr(os, "O_CLOEXEC", 0), 0o600, dir_fd=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fchmod(handle.fileno(), mode)
        os.replace(tmp, name, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException:
        try:
            os.unlink(tmp, dir_fd=folder)
        except OSError:
            pass
        raise

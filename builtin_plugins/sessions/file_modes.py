"""Private files: conversations and tool output are readable by their owner only.

Directories the store creates are 0700 (``hermes_agent.private_dir``); state.db, its lock file
and the health-check record are created 0600 whatever the umask (created with that mode, then
``chmod`` to it). SQLite creates ``-wal`` and ``-shm`` with the database file's mode, so they
are 0600 too. Existing files that are open to group or others are tightened to 0600 when the
store opens them (a state.db written before this rule, or with a loose umask); a file we may
not chmod is left as it is.
"""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

log = logging.getLogger("hermes_agent.sessions")
FILE_MODE = 0o600
COMPANIONS = ("", "-wal", "-shm", "-lock", "-checked")


def open_private(path: Path, flags: int = os.O_RDWR | os.O_CREAT) -> int:
    """``os.open`` that creates the file 0600 regardless of the umask."""
    fd = os.open(path, flags, FILE_MODE)
    try:
        tighten_fd(fd, path)
    except BaseException:
        os.close(fd)
        raise
    return fd


def tighten_fd(fd: int, path: Path) -> None:
    mode = os.fstat(fd).st_mode
    if stat.S_IMODE(mode) & 0o077:
        try:
            os.fchmod(fd, FILE_MODE)
        except OSError as exc:  # another user's file: theirs to fix
            log.warning("%s is readable by other users and cannot be made private (%s); run "
                        "`chmod 600 %s`", path, exc, path)


def create_database_file(path: Path) -> None:
    """Create an empty (valid, new) database file 0600 if none exists, and tighten the
    existing state.db and its companions, before SQLite opens anything."""
    for suffix in COMPANIONS:
        target = Path(f"{path}{suffix}")
        try:
            if suffix == "":
                fd = os.open(target, os.O_RDONLY | os.O_CREAT, FILE_MODE)
            else:
                fd = os.open(target, os.O_RDONLY)
        except FileNotFoundError:
            continue
        except OSError:
            continue  # not readable or the directory is read-only: opening reports it
        try:
            tighten_fd(fd, target)
        finally:
            os.close(fd)

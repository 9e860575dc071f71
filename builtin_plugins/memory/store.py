"""One memory file (MEMORY.md or USER.md): its entries, read, changed under a lock, written
atomically.

Entries are separated by ``\\n§\\n``. A change takes an exclusive ``fcntl.flock`` on a
separate lock file (``MEMORY.md.lock``), re-reads the file under it (another process may have
written since the caller looked), applies the change, checks the capacity and replaces the
file through a temporary file that is fsynced first. A file that cannot be read, holds binary
data or is over its limit (a hand edit) is never rewritten: every write is refused with a
message saying how to fix it.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from hermes_agent import private_dir, write_atomic

SEPARATOR = "\n§\n"
FILE_MODE = 0o600


@dataclass(frozen=True)
class Target:
    """What a memory file is: its tool name, file name, prompt title and limit."""

    name: str  # "memory" or "user"
    filename: str
    title: str
    limit: int


@dataclass(frozen=True)
class State:
    """A file's entries as read, or why they could not be used (``problem``)."""

    entries: tuple[str, ...] = ()
    problem: str = ""

    @property
    def used(self) -> int:
        return len(SEPARATOR.join(self.entries))


def usage(used: int, limit: int) -> str:
    """``67% — 1,474/2,200 chars``."""
    percent = round(100 * used / limit) if limit else 100
    return f"{percent}% — {used:,}/{limit:,} chars"


def join(entries: tuple[str, ...] | list[str]) -> str:
    return SEPARATOR.join(entries)


class MemoryFile:
    """One memory file under ``folder`` (``$HERMES_HOME/memories``)."""

    def __init__(self, folder: Path, target: Target):
        self.folder = folder
        self.target = target
        self.path = folder / target.filename
        self.lock_path = folder / f"{target.filename}.lock"

    def read(self) -> State:
        """The current entries; ``problem`` set when the file is unusable as it stands."""
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return State()
        except OSError as exc:
            return State(problem=self._problem(f"cannot be read ({exc.strerror or exc})",
                                               "check its permissions"))
        if b"\0" in data:
            return State(problem=self._problem("holds binary data (NUL bytes)",
                                               "restore it as plain UTF-8 text or delete it"))
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            return State(problem=self._problem(
                f"is not valid UTF-8 text (byte {exc.start})",
                "save it as UTF-8 text or delete it"))
        entries = tuple(e.strip() for e in text.replace("\r\n", "\n").split(SEPARATOR))
        state = State(tuple(e for e in entries if e))
        if state.used > self.target.limit:
            return State(state.entries, self._problem(
                f"is over its limit ({usage(state.used, self.target.limit)})",
                f"shorten it by hand to at most {self.target.limit:,} characters, or raise "
                f"memory.{self.target.name}_char_limit in config.yaml"))
        return state

    def _problem(self, what: str, fix: str) -> str:
        return (f"{self.path} {what}. It is left exactly as it is and memory writes to it are "
                f"refused until it is fixed: {fix}.")

    @contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the exclusive lock of this file (blocks until other writers are done)."""
        private_dir(self.folder)
        fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, FILE_MODE)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    def write(self, entries: list[str]) -> None:
        """Replace the file with ``entries``: temporary file, fsync, rename, fsync folder.
        The caller holds the lock."""
        write_atomic(self.path, join(entries) + ("\n" if entries else ""), mode=FILE_MODE,
                     durable=True)

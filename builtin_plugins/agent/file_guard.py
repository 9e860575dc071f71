"""Reading a file that goes into the system prompt: only inside its root, only a regular
file, and never more than a bounded number of bytes.

* Containment: the path is resolved (symlinks, symlinked parent directories, ``..``) and must
  lie inside ``root`` (the project, or HERMES_HOME for SOUL.md). The resolved path is opened
  with ``O_NOFOLLOW``, and where the platform shows what was really opened
  (``/proc/self/fd``) that path is checked again, so swapping a link in between does not help.
* Only regular files: a FIFO, a device or a socket is refused (opened non-blocking, so a FIFO
  without a writer cannot hang the prompt build).
* Bounded: at most :func:`read_limit` bytes from the start and as many from the end are read;
  the middle of a larger file is never read (the prompt keeps only a head and a tail anyway).
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path

#: Bytes read beyond 4 bytes per kept character (UTF-8 needs at most 4).
READ_MARGIN = 4096
_OPEN_FLAGS = (os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
               | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))
_KINDS = ((stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISDIR, "a directory"))


class RefusedFile(Exception):
    """The file was not read; the message says why and what to do."""


@dataclass(frozen=True)
class FileText:
    text: str  # the whole file, or its head and tail joined when the middle was not read
    size: int  # bytes on disk
    complete: bool  # False: the middle of the file was never read


def read_limit(max_chars: int) -> int:
    """Bytes read from each end of a file whose prompt text is capped at ``max_chars``."""
    return 4 * max(max_chars, 0) + READ_MARGIN


def read_inside(path: Path, root: Path, max_chars: int, *, root_label: str,
                private: Path | None = None) -> FileText:
    """``path``'s text if it really lies inside ``root``; :class:`RefusedFile` otherwise
    (``OSError`` when it cannot be read at all). ``root_label`` names the root in messages,
    e.g. "the project" or "HERMES_HOME". ``private`` (HERMES_HOME, for project files) is
    refused even inside ``root``, unless ``root`` itself lies in it: a project in the home
    directory must not link to ``~/.hermes/.env`` either."""
    real_root = Path(os.path.realpath(root))
    real_private = Path(os.path.realpath(private)) if private is not None else None
    if real_private is not None and _within(real_root, real_private):
        real_private = None
    real = os.path.realpath(path)
    _check_inside(path, Path(real), real_root, root_label, real_private)
    try:
        fd = os.open(real, _OPEN_FLAGS)
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # became a symlink after it was resolved
            raise RefusedFile(f"{path}: not loaded, it changed into a symlink while being "
                              "opened; check what is modifying the directory.") from exc
        raise
    try:
        opened = _opened_path(fd)
        if opened is not None:
            _check_inside(path, opened, real_root, root_label, real_private)
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = next((name for test, name in _KINDS if test(info.st_mode)), "not a file")
            raise RefusedFile(f"{path}: not loaded, it is {kind}; only regular files are read "
                              "into the prompt. Replace it with a plain file.")
        return _read_ends(fd, info.st_size, read_limit(max_chars))
    finally:
        os.close(fd)


def _within(path: Path, directory: Path) -> bool:
    return path == directory or path.is_relative_to(directory)


def _check_inside(shown: Path, real: Path, real_root: Path, root_label: str,
                  real_private: Path | None) -> None:
    if not _within(real, real_root):
        raise RefusedFile(f"{shown}: not loaded, it leads to {real}, outside {root_label} "
                          f"({real_root}) through a symlink. Files are only read from inside "
                          f"{root_label}; replace the link with a copy of the file if it "
                          "should be loaded.")
    if real_private is not None and _within(real, real_private):
        raise RefusedFile(f"{shown}: not loaded, it leads to {real}, inside HERMES_HOME "
                          f"({real_private}), which holds keys and other private files. "
                          "Project files are never read from there; put a copy of what the "
                          "project needs in the project.")


def _opened_path(fd: int) -> Path | None:
    """The path the kernel opened for ``fd``, where the platform tells (Linux /proc)."""
    try:
        target = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return None
    return Path(target) if target.startswith("/") and not target.endswith(" (deleted)") else None


def _read_up_to(fd: int, count: int) -> bytes:
    chunks: list[bytes] = []
    while count > 0:
        chunk = os.read(fd, min(count, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        count -= len(chunk)
    return b"".join(chunks)


def _read_ends(fd: int, size: int, limit: int) -> FileText:
    head = _read_up_to(fd, limit + 1)
    if len(head) <= limit:
        return FileText(_decode(head), len(head), True)
    head = head[:limit]
    tail_start = max(limit, size - limit)
    os.lseek(fd, tail_start, os.SEEK_SET)
    tail = _read_up_to(fd, limit)
    if tail_start == limit and len(tail) < limit:  # the tail reached the end: all of it was read
        return FileText(_decode(head + tail), limit + len(tail), True)
    skip = 0
    while skip < 3 and skip < len(tail) and 0x80 <= tail[skip] <= 0xBF:
        skip += 1  # start at a whole UTF-8 character
    tail = tail[skip:]
    return FileText(_decode(head) + _decode(tail), max(size, tail_start + len(tail)), False)


def _decode(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")

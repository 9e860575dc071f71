"""Fetching skills for ``hermes skills install``: from a directory, a git URL or an archive
(.zip, .tar.gz, .tgz, .tar), always into a temporary folder first.

git runs without prompts (``GIT_TERMINAL_PROMPT=0``, ssh in batch mode) and with a time
limit. Archives are checked member by member before anything is extracted: absolute paths,
'..', links and devices are refused, as are archives over the size limits.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import tarfile
import zipfile
from collections.abc import Callable, Iterable
from pathlib import Path, PurePosixPath
from typing import IO

from .placement import IGNORED, copy_tree, symlinks_in

MAX_FILES = 2000
MAX_BYTES = 50_000_000
GIT_TIMEOUT = 120
ARCHIVE_SUFFIXES = (".zip", ".tar.gz", ".tgz", ".tar")
_GIT_URL = re.compile(r"^(https?://|ssh://|git://|file://|git@[^:]+:)")


class SourceError(ValueError):
    """A source that cannot be installed; the message says why and what to do."""


def kind_of(source: str) -> str:
    """'dir', 'archive' or 'git' for a source as typed on the command line."""
    if _GIT_URL.match(source) or (source.endswith(".git") and not Path(source).is_dir()):
        return "git"
    if source.lower().endswith(ARCHIVE_SUFFIXES):
        return "archive"
    return "dir"


def fetch(source: str, into: Path) -> tuple[Path, str]:
    """Put the files of ``source`` into the empty folder ``into``; return the root holding
    them and the source as recorded (``dir:<path>``, ``git:<url>``, ``archive:<path>``)."""
    kind = kind_of(source)
    if kind == "git":
        clone(source, into / "repo")
        return into / "repo", f"git:{source}"
    path = Path(source).expanduser().resolve()
    if kind == "archive":
        if not path.is_file():
            raise SourceError(f"{source}: no such archive file")
        extract(path, into / "archive")
        return single_top(into / "archive"), f"archive:{path}"
    if not path.is_dir():
        raise SourceError(f"{source}: not a directory, a git URL (https://, ssh://, git@, "
                          f"file://) or an archive ({', '.join(ARCHIVE_SUFFIXES)})")
    links = symlinks_in(path)
    if links:
        raise SourceError(f"{source} holds symlinks ({', '.join(links[:5])}); skills must be "
                          "plain files. Replace the links with copies.")
    copy_tree(path, into / "dir")
    return into / "dir", f"dir:{path}"


def clone(url: str, dest: Path) -> None:
    if url.startswith("-"):
        raise SourceError(f"{url!r} is not a git URL")
    if shutil.which("git") is None:
        raise SourceError("git is not installed; install it, or download the skill and "
                          "install the folder or archive")
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "",
           "SSH_ASKPASS": "", "GIT_SSH_COMMAND": "ssh -o BatchMode=yes",
           "GIT_CONFIG_NOSYSTEM": "1"}
    command = ["git", "-c", "protocol.ext.allow=never", "-c", "core.symlinks=false",
               "-c", "credential.helper=", "clone", "--depth", "1", "--quiet", "--", url,
               str(dest)]
    try:
        proc = subprocess.run(command, env=env, capture_output=True, text=True,
                              timeout=GIT_TIMEOUT, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise SourceError(f"git clone {url} took over {GIT_TIMEOUT} s; check the URL and "
                          "your network") from None
    if proc.returncode != 0:
        detail = (proc.stderr or proc.stdout).strip().splitlines()
        raise SourceError(f"git clone {url} failed: {detail[-1] if detail else 'no output'} "
                          "(a private repository needs credentials git can use without "
                          "asking, e.g. an ssh key)")
    shutil.rmtree(dest / ".git", ignore_errors=True)
    links = symlinks_in(dest)
    if links:
        raise SourceError(f"the repository holds symlinks ({', '.join(links[:5])}); skills "
                          "must be plain files")


def _member_path(name: str) -> PurePosixPath:
    path = PurePosixPath(name.replace("\\", "/"))
    if path.is_absolute() or name.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", name):
        raise SourceError(f"the archive holds an absolute path ({name!r}); refused")
    if ".." in path.parts:
        raise SourceError(f"the archive holds a path leaving its folder ({name!r}); refused")
    return path


def _budget(count: int, total: int) -> None:
    if count > MAX_FILES or total > MAX_BYTES:
        raise SourceError(f"the archive is too large (over {MAX_FILES} files or "
                          f"{MAX_BYTES // 1_000_000} MB); a skill should be small")


def extract(archive: Path, dest: Path) -> None:
    """Extract ``archive`` into ``dest`` after checking every member."""
    dest.mkdir(parents=True)
    try:
        if archive.name.lower().endswith(".zip"):
            _extract_zip(archive, dest)
        else:
            _extract_tar(archive, dest)
    except OSError as exc:  # e.g. a file and a folder of one name
        raise SourceError(f"{archive.name} cannot be extracted ({exc})") from None


#: (member name, is a folder, opens the member's data: None for no data)
Member = tuple[str, bool, Callable[[], "IO[bytes] | None"]]


def _write(dest: Path, members: Iterable[Member]) -> None:
    """Write checked members below ``dest``."""
    for name, is_dir, open_member in members:
        target = dest / _member_path(name)
        if is_dir:
            target.mkdir(parents=True, exist_ok=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        src = open_member()
        if src is None:
            continue
        with src, open(target, "wb") as out:
            shutil.copyfileobj(src, out)


def _extract_zip(archive: Path, dest: Path) -> None:
    try:
        with zipfile.ZipFile(archive) as zf:
            members = zf.infolist()
            total = 0
            for info in members:
                _member_path(info.filename)
                mode = info.external_attr >> 16
                if stat.S_ISLNK(mode):
                    raise SourceError(f"the archive holds a symlink ({info.filename}); refused")
                total += info.file_size
            _budget(len(members), total)
            _write(dest, ((i.filename, i.is_dir(), lambda i=i: zf.open(i)) for i in members))
    except zipfile.BadZipFile as exc:
        raise SourceError(f"{archive.name} is not a valid zip archive ({exc})") from None


def _extract_tar(archive: Path, dest: Path) -> None:
    try:
        with tarfile.open(archive, "r:*") as tf:
            members = tf.getmembers()
            for member in members:
                _member_path(member.name)
                if not (member.isfile() or member.isdir()):
                    kind = ("symlink" if member.issym() else "hard link" if member.islnk()
                            else "special file")
                    raise SourceError(f"the archive holds a {kind} ({member.name}); refused")
            _budget(len(members), sum(m.size for m in members))
            _write(dest, ((m.name, m.isdir(), lambda m=m: tf.extractfile(m)) for m in members))
    except (tarfile.TarError, EOFError) as exc:
        raise SourceError(f"{archive.name} is not a readable tar archive ({exc})") from None


def single_top(root: Path) -> Path:
    """``root``'s only folder when it holds nothing else (archives usually wrap one)."""
    entries = [p for p in root.iterdir() if p.name not in IGNORED]
    if len(entries) == 1 and entries[0].is_dir():
        return entries[0]
    return root

"""$HERMES_HOME: private folders (0700; secret files 0600), atomic writes, and the on-disk
cache of validation results that spares quick commands importing pydantic and PyYAML (sealed,
:mod:`.seal`: an entry changed outside hermes is not believed).
"""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ._version import __version__
from .seal import seal_json, unseal_json

try:  # the builtin module: importing hashlib first loads OpenSSL, a few ms of a quick command
    from _sha2 import sha256  # Python 3.12+
except ImportError:
    try:
        from _sha256 import sha256  # Python 3.11
    except ImportError:
        from hashlib import sha256

DIR_MODE = 0o700
FILE_MODE = 0o600
SCHEMA_REVISION = "7"  # bump when a validation model changes shape
_MAX_ENTRIES = 2000
#: What validating the builtin and bundled plugin.yaml files and the default config stores,
#: shipped with the package (``python -m hermes_agent.cli.prevalidated`` writes it)
SHIPPED = Path(__file__).parent / "prevalidated.json"
_shipped: dict[str, Any] = {}


def hermes_home(env: Mapping[str, str] | None = None) -> Path:
    """``$HERMES_HOME``, default ``~/.hermes``."""
    value = (os.environ if env is None else env).get("HERMES_HOME")
    return Path(value).expanduser() if value else Path.home() / ".hermes"


def private_dir(path: Path) -> Path:
    """Create ``path`` and its missing parents with mode 0700 whatever the umask; existing
    folders keep the mode their owner gave them. Returns ``path``."""
    missing = []
    node = Path(path)
    while not node.exists() and node.parent != node:
        missing.append(node)
        node = node.parent
    for folder in reversed(missing):
        try:
            os.mkdir(folder, DIR_MODE)
        except FileExistsError:  # created meanwhile by someone else: theirs to decide
            continue
        os.chmod(folder, DIR_MODE)
    if not path.is_dir():
        raise NotADirectoryError(f"{path} exists and is not a folder; move it away or set "
                                 "HERMES_HOME to another location")
    return path


#: the files in $HERMES_HOME that hold keys; a loose mode is tightened at every start
SECRET_FILES = (".env", "auth.json")


def tighten_secret_files(home: Path) -> list[str]:
    """Make $HERMES_HOME's key files (:data:`SECRET_FILES`) readable by their owner only when
    others may read them (``echo KEY=... >> .env`` creates one 0644): one ``stat`` each.
    Returns what to tell the user: each file tightened, and each one that could not be (owned
    by another user, a read-only file system), with the command that fixes it."""
    said = []
    for name in SECRET_FILES:
        path = home / name
        try:
            info = os.stat(path)
        except OSError:  # missing (the usual case), or unreachable: nothing to tighten
            continue
        loose = info.st_mode & 0o077
        if not loose or (info.st_mode & 0o170000) != 0o100000:  # private, or not a file
            continue
        mode = f"{info.st_mode & 0o777:04o}"
        getuid = getattr(os, "getuid", None)
        owner = getuid() if getuid is not None else info.st_uid
        if info.st_uid != owner:
            said.append(f"{path} holds keys and other users may read it (mode {mode}); it is "
                        f"owned by another user, so hermes leaves it: its owner should run "
                        f"`chmod 600 {path}`")
            continue
        try:
            os.chmod(path, info.st_mode & 0o700)
        except OSError as exc:
            said.append(f"{path} holds keys and other users may read it (mode {mode}); hermes "
                        f"cannot change that ({exc.strerror or exc}): run `chmod 600 {path}`")
        else:
            said.append(f"{path} holds keys and was readable by other users (mode {mode}); "
                        f"hermes made it private (mode {info.st_mode & 0o700:04o})")
    return said


def write_atomic(path: Path, text: str, mode: int | None = None, *, durable: bool = False) -> None:
    """Write ``text`` via a temporary file and rename, so readers never see half a file.
    ``durable``: fsync the file and its folder, so the content survives a crash."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f".{path.name}.{os.urandom(6).hex()}.tmp"  # mkstemp, minus its import
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    if durable:
        folder = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(folder)
        finally:
            os.close(folder)


def path_stamp(paths: list[str]) -> bytes:
    """``sys.path`` with the mtime of each entry: changes whenever pip installs or removes."""
    parts = []
    for entry in map(os.path.abspath, paths):  # "" (python -c) is the current directory
        try:
            stamp = os.stat(entry).st_mtime_ns
        except OSError:
            stamp = -1
        parts.append(f"{entry}\0{stamp}")
    return "\n".join(parts).encode("utf-8", "surrogateescape")


class ValidationCache:
    """Results of validating hashed inputs (manifest bytes, the merged config), kept in a
    sealed JSON file (:func:`.seal.seal_json`); a miss is looked up in :data:`SHIPPED`
    (unless ``shipped=False``), so a new home validates nothing shipped. Corrupt, unsealed,
    wrongly sealed or unwritable caches are ignored (the first two are rewritten)."""

    PURPOSE = "validation-cache"

    def __init__(self, path: Path | None, shipped: bool = True):
        self.path = path
        self._entries: dict[str, Any] | None = None
        self._dirty = False
        self.shipped = shipped

    @staticmethod
    def key(kind: str, payload: bytes) -> str:
        digest = sha256(payload)
        digest.update(f"\0{kind}\0{__version__}\0{SCHEMA_REVISION}".encode())
        return digest.hexdigest()

    def _load(self) -> dict[str, Any]:
        if self._entries is None:
            self._entries = {}
            try:
                text = self.path.read_text(encoding="utf-8") if self.path else ""
            except (OSError, ValueError):
                return self._entries
            if text:
                self._entries = unseal_json(self.PURPOSE, text, self.path) or {}
                self._dirty = not self._entries  # unsealed or changed: written again
        return self._entries

    def items(self) -> list[tuple[str, Any]]:
        """The entries, as this process sees them (read, found in the table or added)."""
        return list(self._load().items())

    def get(self, key: str) -> Any | None:
        hit = self._load().get(key)
        if hit is None and self.shipped:
            if not _shipped:  # read once (missing or corrupt: everything is validated)
                _shipped[""] = None
                try:
                    _shipped.update(json.loads(SHIPPED.read_text(encoding="utf-8")))
                except (OSError, ValueError, TypeError):
                    pass
            if _shipped.get(key) is not None:
                hit = copy.deepcopy(_shipped[key])  # the caller's to change
                self.put(key, hit)
        return hit

    def put(self, key: str, value: Any) -> None:
        entries = self._load()
        if entries.get(key) != value:
            entries[key] = value
            self._dirty = True

    def save(self) -> None:
        if not self._dirty or self.path is None or self._entries is None:
            return
        entries = list(self._entries.items())  # a copy: another thread may add entries
        text = seal_json(self.PURPOSE, dict(entries[-_MAX_ENTRIES:]))
        if text is None:  # no cache key: nothing stored that a later run could not check
            return
        try:
            private_dir(self.path.parent)
            write_atomic(self.path, text)
            self._dirty = False
        except OSError:
            pass

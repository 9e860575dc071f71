"""Sealed files: what hermes keeps under ``$HERMES_HOME`` to save work (validation results,
the ``--help`` listing, an MCP server's tool listing) is trusted only with a valid seal.

Anything that can write to ``$HERMES_HOME`` (a file tool, a command, a synced or shared
folder) could otherwise change what a cache says: turn approvals off, drop a plugin's secret
declaration, mark an injected AGENTS.md as clean. A sealed file is a JSON object whose last
member is ``"hermes-seal": HMAC-SHA256(key, purpose NUL body)``, ``body`` being the object
without that member, byte for byte. The key is per user and lives outside ``$HERMES_HOME``
(:func:`cache_key_path`: ``$XDG_STATE_HOME/hermes-agent/cache.key``, default
``~/.local/state/hermes-agent/cache.key``, mode 0600), in a folder the sandbox hides from
commands and the file tools refuse. A file whose seal does not match is ignored (and
rebuilt by its owner), with a warning; without a usable key nothing is read from disk.
See docs/cache.md.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .dotenv import read_env_file

try:  # the builtin module: importing hashlib first loads OpenSSL, a few ms of a quick command
    from _sha2 import sha256  # Python 3.12+
except ImportError:
    try:
        from _sha256 import sha256  # Python 3.11
    except ImportError:
        from hashlib import sha256
from _operator import _compare_digest as same_digest

SEAL_FIELD = "hermes-seal"
_HEAD = f'"{SEAL_FIELD}":"'
_TAIL_LEN = len(_HEAD) + 64 + 2  # the member, its 64 hex digits and the closing '"}'
KEY_FOLDER = "hermes-agent"
KEY_NAME = "cache.key"
#: variables config.py exported from $HERMES_HOME/.env into os.environ (name -> value): a
#: line there must not move the key to a place the writer of .env chose
EXPORTED_FROM_DOTENV: dict[str, str] = {}
_keys: dict[str, bytes | None] = {}  # key file -> key (None: unusable), read once a process
_IPAD = bytes(b ^ 0x36 for b in range(256))
_OPAD = bytes(b ^ 0x5C for b in range(256))


def cache_key_path(env: Mapping[str, str] | None = None) -> Path:
    """Where this user's cache key is: ``$XDG_STATE_HOME/hermes-agent/cache.key`` (an
    absolute ``XDG_STATE_HOME``), else ``~/.local/state/hermes-agent/cache.key``. A variable
    ``$HERMES_HOME/.env`` sets is not used (hermes exports .env into its environment, and its
    child processes inherit that): the key is not where the writer of .env chose."""
    env = os.environ if env is None else env
    named = _dotenv_names(env)

    def own(name: str) -> str:
        value = env.get(name) or ""
        return "" if name in named or EXPORTED_FROM_DOTENV.get(name) == value else value

    state = own("XDG_STATE_HOME")
    if not os.path.isabs(state):
        state = os.path.join(own("HOME") or _account_home(), ".local", "state")
    return Path(state) / KEY_FOLDER / KEY_NAME


def _dotenv_names(env: Mapping[str, str]) -> set[str]:
    """The names ``$HERMES_HOME/.env`` assigns."""
    home = env.get("HERMES_HOME") or os.path.join(os.path.expanduser("~"), ".hermes")  # as hermes_home()
    return set(read_env_file(Path(os.path.expanduser(home)) / ".env"))


def _account_home() -> str:
    """The user's home folder from the account database (no variable moves it)."""
    try:
        import pwd

        return pwd.getpwuid(os.getuid()).pw_dir
    except (ImportError, KeyError, AttributeError):
        return os.path.expanduser("~")


def cache_key(path: Path | None = None) -> bytes | None:
    """This user's cache key, created (0600, in a 0700 folder) on first use; None when it
    cannot be read or made (then caches are neither read nor written)."""
    path = cache_key_path() if path is None else path
    where = str(path)
    if where not in _keys:
        _keys[where] = _read_key(path)
        if _keys[where] is None:
            _keys[where] = _make_key(path)
    return _keys[where]


def _read_key(path: Path) -> bytes | None:
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        getuid = getattr(os, "getuid", None)
        if getuid is not None and info.st_uid != getuid():
            _warn("%s is owned by another user: hermes does not use it, so its caches are "
                  "not kept; remove it", path)
            return None
        if info.st_mode & 0o077 and hasattr(os, "fchmod"):  # made private, as .env is
            os.fchmod(fd, 0o600)
        try:
            key = bytes.fromhex(os.read(fd, 128).decode("ascii"))
        except ValueError:
            key = b""
        if len(key) != 32:
            _warn("%s is not a hermes cache key (64 hex digits), so caches are not kept; "
                  "remove it and hermes makes a new one", path)
            return None
        return key
    except OSError:
        return None
    finally:
        os.close(fd)


def _make_key(path: Path) -> bytes | None:
    """A new key, written whole before it appears under its name (a link, which fails when
    another process made one meanwhile: then that one is read)."""
    try:
        if not path.parent.is_dir():
            os.makedirs(path.parent, 0o700, exist_ok=True)
            os.chmod(path.parent, 0o700)
        key = os.urandom(32)
        tmp = path.parent / f".{KEY_NAME}.{os.urandom(6).hex()}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0),
                     0o600)
        try:
            os.write(fd, key.hex().encode("ascii"))
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.link(tmp, path)
        except FileExistsError:
            return _read_key(path)
        finally:
            os.unlink(tmp)
        return key
    except OSError:
        return None


def _mac(key: bytes, purpose: str, body: str) -> str:
    """HMAC-SHA256 (RFC 2104) of ``purpose`` NUL ``body``."""
    block = (sha256(key).digest() if len(key) > 64 else key).ljust(64, b"\0")
    inner = sha256(block.translate(_IPAD))
    inner.update(purpose.encode() + b"\0" + body.encode("utf-8", "surrogatepass"))
    outer = sha256(block.translate(_OPAD))
    outer.update(inner.digest())
    return outer.hexdigest()


def seal_json(purpose: str, data: Mapping[str, Any], key: bytes | None = None) -> str | None:
    """``data`` as sealed JSON text for a file of ``purpose`` (say, "validation-cache"); None
    without a usable key (then the caller stores nothing)."""
    key = cache_key() if key is None else key
    if key is None:
        return None
    body = json.dumps(dict(data), separators=(",", ":"))
    members = body[1:-1]
    return f'{{{members}{"," if members else ""}{_HEAD}{_mac(key, purpose, body)}"}}'


def unseal_json(purpose: str, text: str, where: object,
                key: bytes | None = None) -> dict[str, Any] | None:
    """The object :func:`seal_json` sealed for ``purpose``, or None: no usable key, not
    sealed (a file of an earlier version), or a seal that does not match (changed outside
    hermes: warned, naming ``where``)."""
    key = cache_key() if key is None else key
    tail = text[-_TAIL_LEN:]
    if key is None or not (tail.startswith(_HEAD) and tail.endswith('"}')):
        return None
    rest = text[:-_TAIL_LEN]
    body = rest[:-1] + "}" if rest.endswith(",") else "{}" if rest == "{" else ""
    if not body or not same_digest(_mac(key, purpose, body), tail[len(_HEAD):-2]):
        _warn("%s was changed outside hermes (its seal does not match): it is ignored and "
              "rebuilt", where)
        return None
    try:
        data = json.loads(body)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _warn(message: str, *args: object) -> None:
    import logging

    logging.getLogger("hermes_agent.cache").warning(message, *args)

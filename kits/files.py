"""Owner: the builtin plugin `plugin_admin`.

Files under $HERMES_HOME: the .env file, and whether the process a pid file names runs.

``$HERMES_HOME`` holds API keys (.env), conversations (state.db) and the configuration, so
what hermes and its plugins create there is readable by its owner only: folders 0700,
secret files 0600. Private folders and atomic writes are the facade's ``private_dir`` and
``write_atomic(path, text, mode=0o600)``; .env is written with them. Not part of the contract
docs/api.md locks (docs/kits.md).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

from hermes_agent import ConfigError, private_dir, write_atomic

__all__ = ["set_env_values", "unset_env_values", "pid_alive"]

_KEY = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=")
_PLAIN = re.compile(r"^[A-Za-z0-9_./:@+,=-]*\Z")


def _quote(value: str) -> str:
    """A value as .env text: bare when safe, otherwise quoted (escapes kept minimal)."""
    if _PLAIN.match(value):
        return value
    if '"' not in value and "\n" not in value:
        return f'"{value}"'
    if "'" not in value and "\n" not in value:
        return f"'{value}'"
    raise ConfigError("a value with both quote characters or a newline cannot be stored in "
                      ".env; set it in the environment instead")


def set_env_values(path: Path, values: Mapping[str, str]) -> None:
    """Set ``KEY=value`` lines of a .env file: replaced in place or appended, every other line
    kept as it is. The file is written atomically with mode 0600 because it holds secrets."""
    if not values:
        return
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        lines = []
    pending = dict(values)
    out = []
    for line in lines:
        match = _KEY.match(line)
        if match and match.group(1) in pending:
            key = match.group(1)
            out.append(f"{key}={_quote(pending.pop(key))}")
        else:
            out.append(line)
    out.extend(f"{key}={_quote(value)}" for key, value in pending.items())
    private_dir(path.parent)
    write_atomic(path, "\n".join(out) + "\n", mode=0o600)


def unset_env_values(path: Path, names: Iterable[str]) -> list[str]:
    """Remove the ``KEY=...`` lines of ``names`` from a .env file, every other line kept;
    the names that were there. Written atomically, mode 0600."""
    wanted = set(names)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return []
    kept = [line for line in lines if not ((m := _KEY.match(line)) and m.group(1) in wanted)]
    removed = sorted({m.group(1) for line in lines if (m := _KEY.match(line))} & wanted)
    if removed:
        write_atomic(path, "".join(f"{line}\n" for line in kept), mode=0o600)
    return removed


def pid_alive(pid: object) -> bool:
    """Whether the process ``pid`` (as read from a state or lock file) still runs."""
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, owned by another user
        return True
    return True

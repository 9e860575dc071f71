"""Private folders: what hermes creates under $HERMES_HOME is readable by its owner only.

``$HERMES_HOME`` holds API keys (.env), conversations (state.db) and the configuration, so a
folder hermes creates there gets mode 0700 whatever the umask, and files holding secrets
0600 (:func:`~.vcache.write_atomic` with ``mode``). Folders that already exist keep the
mode their owner gave them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

DIR_MODE = 0o700
FILE_MODE = 0o600


def hermes_home(env: Mapping[str, str] | None = None) -> Path:
    """``$HERMES_HOME``, default ``~/.hermes`` (here, not in config: ``--help`` reads it cheaply)."""
    value = (os.environ if env is None else env).get("HERMES_HOME")
    return Path(value).expanduser() if value else Path.home() / ".hermes"


def private_dir(path: Path) -> Path:
    """Create ``path`` and any missing parents with mode 0700 (set explicitly, so the umask
    does not matter); existing folders are left as they are. Returns ``path``."""
    missing = []
    node = Path(path)
    while not node.exists():
        missing.append(node)
        if node.parent == node:
            break
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

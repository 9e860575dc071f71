"""SOUL.md: the agent's identity, the first layer of the system prompt.

On first run ``$HERMES_HOME/SOUL.md`` is created with the built-in identity, readable by its
owner only (0600); an existing file is never overwritten. An empty file means the built-in
identity. It is read like a context file (never through a symlink that leaves HERMES_HOME,
never more than the size cap), truncated, then scanned for prompt injection.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .file_guard import RefusedFile
from .scan_memo import blocked_notice
from .prompt_file import prepare
from .truncation import DEFAULT_MAX_CHARS

SOUL_FILE = "SOUL.md"

DEFAULT_IDENTITY = (
    "You are Hermes, an AI agent that works for the person you are talking to. You answer "
    "questions, write and fix code, research and analyse, and carry out tasks with the tools "
    "you have. Be direct and precise, check your work, say plainly when you are unsure or "
    "something failed, and keep answers as short as the task allows. Explore purposefully: "
    "look at what you need, not everything you can.")


@dataclass
class Identity:
    text: str
    source: str  # "SOUL.md" or "builtin"
    notices: list[str] = field(default_factory=list)


def ensure_soul(home: Path) -> Path:
    """Create ``home/SOUL.md`` (mode 0600) with the built-in identity unless something is
    there already, even a dangling symlink (never overwrites, never writes through a link)."""
    path = home / SOUL_FILE
    if os.path.lexists(path):
        return path
    home.mkdir(parents=True, exist_ok=True)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags, 0o600)
    except FileExistsError:  # created by another process meanwhile: theirs stays
        return path
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(DEFAULT_IDENTITY + "\n")
    return path


def load_identity(home: Path, *, create: bool = True,
                  max_chars: int = DEFAULT_MAX_CHARS, cache: Any = None) -> Identity:
    """The identity layer: SOUL.md if it has content, else the built-in identity.
    ``cache``: where scan results are remembered (see :mod:`.scan_memo`)."""
    path = ensure_soul(home) if create else home / SOUL_FILE
    try:
        soul = prepare(path, home, SOUL_FILE, max_chars, root_label="HERMES_HOME", cache=cache)
    except RefusedFile as exc:
        return Identity(DEFAULT_IDENTITY, "builtin",
                        [f"{exc} The built-in identity is used meanwhile."])
    except FileNotFoundError:
        return Identity(DEFAULT_IDENTITY, "builtin")
    except OSError as exc:
        return Identity(DEFAULT_IDENTITY, "builtin",
                        [f"{path}: could not be read ({exc.strerror or exc}); the built-in "
                         "identity is used. Check the file's permissions."])
    if not soul.text:
        return Identity(DEFAULT_IDENTITY, "builtin")
    if soul.findings:
        notice = blocked_notice(SOUL_FILE, soul.findings)
        return Identity(f"{DEFAULT_IDENTITY}\n\n{notice}", "builtin",
                        [f"{path}: not used as the identity ({', '.join(soul.findings)}); the "
                         "built-in identity is used. Remove the flagged text to use it again."])
    notices = ([f"{path} is longer than {max_chars:,} characters; the middle was left out."]
               if soul.truncated else [])
    return Identity(soul.text, SOUL_FILE, notices)

"""SOUL.md: the agent's identity, the first layer of the system prompt.

On first run ``$HERMES_HOME/SOUL.md`` is created with the built-in identity; an existing
file is never overwritten. An empty file means the built-in identity. The content passes the
injection scan and is truncated like a context file.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from .injection import blocked_notice, scan
from .truncation import DEFAULT_MAX_CHARS, truncate_head_tail

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
    """Create ``home/SOUL.md`` with the built-in identity unless it exists (never overwrites)."""
    path = home / SOUL_FILE
    if path.exists():
        return path
    home.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:  # created by another process meanwhile: theirs stays
        return path
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(DEFAULT_IDENTITY + "\n")
    return path


def load_identity(home: Path, *, create: bool = True,
                  max_chars: int = DEFAULT_MAX_CHARS) -> Identity:
    """The identity layer: SOUL.md if it has content, else the built-in identity."""
    path = ensure_soul(home) if create else home / SOUL_FILE
    try:
        text = path.read_text(encoding="utf-8", errors="replace").removeprefix("\ufeff").strip()
    except OSError:
        return Identity(DEFAULT_IDENTITY, "builtin")
    if not text:
        return Identity(DEFAULT_IDENTITY, "builtin")
    findings = scan(text)
    if findings:
        notice = blocked_notice(SOUL_FILE, findings)
        return Identity(f"{DEFAULT_IDENTITY}\n\n{notice}", "builtin",
                        [f"{path}: not used as the identity ({', '.join(findings)}); the "
                         "built-in identity is used. Remove the flagged text to use it again."])
    text, cut = truncate_head_tail(text, SOUL_FILE, max_chars, str(path))
    notices = [f"{path} is longer than {max_chars:,} characters; the middle was left out."] if cut else []
    return Identity(text, SOUL_FILE, notices)

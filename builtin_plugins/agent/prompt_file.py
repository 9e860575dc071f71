"""One file on its way into the system prompt: read safely, cleaned, truncated, then scanned.

The order matters: the scan sees exactly what would be injected (the truncated text with its
marker, under the name it is shown with), so its cost is bounded by the size cap, not by the
file.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .file_guard import read_inside
from .scan_memo import scan_findings
from .truncation import truncate_head_tail

_FRONT_MATTER = re.compile(r"\A---[ \t]*\n(?:[^\n]*+\n)*?---[ \t]*(?:\n|\Z)")


@dataclass
class PromptFile:
    text: str  # as it would be injected; "" when the file has no content
    findings: list[str] = field(default_factory=list)  # the injection scan's; empty: clean
    truncated: bool = False


def strip_front_matter(text: str) -> str:
    """``text`` without a leading YAML front matter block (``---`` ... ``---``)."""
    return _FRONT_MATTER.sub("", text, count=1)


def prepare(path: Path, root: Path, name: str, max_chars: int, *, root_label: str,
            clean: Callable[[str], str] | None = None, private: Path | None = None,
            cache: Any = None) -> PromptFile:
    """Read ``path`` (inside ``root``, never from ``private``: see :func:`read_inside`),
    strip a BOM and (via ``clean``) other framing, truncate to ``max_chars`` and scan the
    result (``cache``: see :mod:`.scan_memo`). Raises :class:`~.file_guard.RefusedFile` or ``OSError`` when the file cannot be
    used."""
    read = read_inside(path, root, max_chars, root_label=root_label, private=private)
    text = read.text.removeprefix("\ufeff")
    if clean is not None:
        text = clean(text)
    text = text.strip()
    if not text:
        return PromptFile("")
    text, cut = truncate_head_tail(text, name, max_chars, str(path),
                                   unread_bytes=None if read.complete else read.size)
    return PromptFile(text, scan_findings(f"{name}\n\n{text}", cache), cut)

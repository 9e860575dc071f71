"""Head-and-tail truncation of files injected into the system prompt."""

from __future__ import annotations

DEFAULT_MAX_CHARS = 20_000
HEAD_SHARE = 0.7
TAIL_SHARE = 0.2


def truncate_head_tail(text: str, name: str, max_chars: int = DEFAULT_MAX_CHARS,
                       path: str = "") -> tuple[str, bool]:
    """``text`` kept whole up to ``max_chars``; past that 70% head, 20% tail and a marker
    telling the model how to read the rest. Returns ``(text, truncated)``."""
    if len(text) <= max_chars:
        return text, False
    head = int(max_chars * HEAD_SHARE)
    tail = int(max_chars * TAIL_SHARE)
    omitted = len(text) - head - tail
    where = path or name
    marker = (f"\n\n[... {omitted:,} characters of {name} omitted ({len(text):,} in all). "
              f"Read the full file with read_file('{where}') when you need the middle part. ...]\n\n")
    return text[:head] + marker + text[-tail:], True

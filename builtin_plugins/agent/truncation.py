"""Head-and-tail truncation of files injected into the system prompt."""

from __future__ import annotations

DEFAULT_MAX_CHARS = 20_000
HEAD_SHARE = 0.7
TAIL_SHARE = 0.2


def truncate_head_tail(text: str, name: str, max_chars: int = DEFAULT_MAX_CHARS,
                       path: str = "", *, unread_bytes: int | None = None) -> tuple[str, bool]:
    """``text`` kept whole up to ``max_chars``; past that 70% head, 20% tail and a marker
    telling the model how to read the rest. Returns ``(text, truncated)``.

    ``unread_bytes`` is the size of a file whose middle was never read (``text`` is then its
    head and tail joined): it is always truncated and the marker gives the size in bytes."""
    if len(text) <= max_chars and unread_bytes is None:
        return text, False
    head = int(max_chars * HEAD_SHARE)
    tail = int(max_chars * TAIL_SHARE)
    where = path or name
    if unread_bytes is None:
        omitted = f"{len(text) - head - tail:,} characters of {name} omitted ({len(text):,} in all)"
    else:
        omitted = f"the middle of {name} omitted ({unread_bytes:,} bytes in all)"
    marker = (f"\n\n[... {omitted}. Read the full file with read_file('{where}') when you need "
              "the middle part. ...]\n\n")
    return text[:head] + marker + (text[-tail:] if tail else ""), True

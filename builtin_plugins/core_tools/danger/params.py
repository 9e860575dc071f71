"""Parameter expansion operators applied to a known value: ``${X%pat}``, ``${X#pat}``,
``${X/a/b}``, ``${X^^}``, ``${X,,}``, ``${X:off:len}``, ``${X:+alt}``."""

from __future__ import annotations

import fnmatch
import re

from .site import OPAQUE

_SLICE = re.compile(r":\s*(-?\d+)(?::\s*(-?\d+))?")


def _trim(value: str, pattern: str, longest: bool, suffix: bool) -> str:
    sizes = range(len(value), -1, -1) if longest else range(len(value) + 1)
    for size in sizes:
        piece = value[len(value) - size:] if suffix else value[:size]
        if fnmatch.fnmatchcase(piece, pattern):
            return value[:len(value) - size] if suffix else value[size:]
    return value


def modify(value: str, modifier: str) -> str | None:
    """``value`` after ``modifier`` (the text after the name), or None when the result
    cannot be known."""
    if modifier.startswith(("%%", "##")):
        return _trim(value, modifier[2:], longest=True, suffix=modifier[0] == "%")
    if modifier.startswith(("%", "#")):
        return _trim(value, modifier[1:], longest=False, suffix=modifier[0] == "%")
    if modifier.startswith("/"):
        every = modifier.startswith("//")
        pattern, _, replacement = modifier[2 if every else 1:].partition("/")
        if re.search(r"[*?\[]", pattern) or not pattern:
            return None
        return value.replace(pattern, replacement, -1 if every else 1)
    if modifier in ("^^", ",,", "^", ","):
        changed = value.upper() if modifier[0] == "^" else value.lower()
        return changed if len(modifier) == 2 else changed[:1] + value[1:]
    if modifier.startswith((":+", "+")):
        return modifier.split("+", 1)[1] if value else ""
    m = _SLICE.fullmatch(modifier)
    if m:
        start = int(m.group(1))
        piece = value[start:] if start >= 0 else value[len(value) + start:]
        if m.group(2) is not None:
            length = int(m.group(2))
            piece = piece[:length] if length >= 0 else piece[:length or None]
        return piece
    return None


def element(elements: list[str] | None, modifier: str) -> str | list[str]:
    """``${a[@]}``, ``${a[*]}`` (every element) or ``${a[N]}`` of a known array."""
    index, closed, rest = modifier[1:].partition("]")
    if elements is None or not closed or rest:
        return OPAQUE
    if index in ("@", "*"):
        return list(elements)
    if not index.isdigit():
        return OPAQUE
    return elements[int(index)] if int(index) < len(elements) else ""

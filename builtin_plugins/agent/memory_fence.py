"""Helpers of the memory manager: the ``<memory-context>`` fence (built for a request, stripped
from model output, also across stream deltas) and calls filtered by a method's signature, so
providers written for Hermes Agent 0.19 (``**kwargs`` or a subset of the arguments) work."""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from typing import Any

OPEN = "<memory-context>"
CLOSE = "</memory-context>"
NOTE = ("[System note: the following is recalled memory context, not new user input. Use it "
        "as background when relevant; do not quote or mention this block.]")
_BLOCK = re.compile(re.escape(OPEN) + r".*?(?:" + re.escape(CLOSE) + r"|\Z)", re.DOTALL)


def fence(text: str) -> str:
    """Recalled text wrapped in the fence (empty text: no fence)."""
    text = text.strip()
    if not text:
        return ""
    return f"{OPEN}\n{NOTE}\n\n{strip_fences(text)}\n{CLOSE}"


def strip_fences(text: str) -> str:
    """``text`` without fence blocks (an unclosed one runs to the end) or stray closing tags."""
    if OPEN not in text and CLOSE not in text:
        return text
    return _BLOCK.sub("", text).replace(CLOSE, "")


class StreamScrubber:
    """Removes fence blocks from a text stream whose tags may be split across deltas: the tail
    that could start a tag is held back until the next delta (or :meth:`flush`)."""

    def __init__(self) -> None:
        self._buffer = ""
        self._inside = False

    def feed(self, delta: str) -> str:
        self._buffer += delta
        out: list[str] = []
        while True:
            tag = CLOSE if self._inside else OPEN
            index = self._buffer.find(tag)
            if index >= 0:
                if not self._inside:
                    out.append(self._buffer[:index].replace(CLOSE, ""))
                self._buffer = self._buffer[index + len(tag):]
                self._inside = not self._inside
                continue
            keep = _partial_tail(self._buffer, tag)
            if not self._inside:
                out.append(self._buffer[:len(self._buffer) - keep].replace(CLOSE, ""))
            self._buffer = self._buffer[len(self._buffer) - keep:]
            return "".join(out)

    def flush(self) -> str:
        """What is held back at the end of the stream (nothing inside an unclosed fence)."""
        rest, self._buffer = ("" if self._inside else self._buffer), ""
        self._inside = False
        return rest


def _partial_tail(text: str, tag: str) -> int:
    """Length of the longest end of ``text`` that is a proper start of ``tag``."""
    for size in range(min(len(tag) - 1, len(text)), 0, -1):
        if tag.startswith(text[-size:]):
            return size
    return 0


def call_accepting(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Call ``fn`` with the positional arguments it has room for and only the keyword
    arguments its signature accepts (all of them when it takes ``**kwargs``)."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):  # a builtin or C callable: pass everything
        return fn(*args, **kwargs)
    kinds = {p.kind for p in params}
    if inspect.Parameter.VAR_POSITIONAL not in kinds:
        room = sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)
        args = args[:room]
    positional = {p.name for p in list(params)[:len(args)]}
    if inspect.Parameter.VAR_KEYWORD not in kinds:
        names = {p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
        kwargs = {k: v for k, v in kwargs.items() if k in names and k not in positional}
    return fn(*args, **kwargs)

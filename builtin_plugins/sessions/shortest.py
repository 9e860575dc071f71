"""Which matches of a phrase search get a snippet in the walk (see ``search._phrase_hits``).

FTS5 walks the matches newest first; a match gets its snippet when it is among the ``keep``
shortest seen so far, so every row of the final top has one. The SQL function is registered
once per read connection (registering a function again expires every prepared statement of
the connection, which then compiles again) and asks the walk running on its own thread.
"""

from __future__ import annotations

import heapq
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager

FUNCTION = "hermes_among_shortest"
_walks = threading.local()


def varint(blob: bytes | None) -> int:
    """The first SQLite varint in ``blob`` (FTS5's docsize: tokens in the one column)."""
    value = 0
    for i, byte in enumerate(blob or b""):
        if i == 8:
            return (value << 8) | byte
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            break
    return value


class Shortest:
    """Called with each row's docsize, newest row first: whether the row is among the
    ``keep`` shortest so far (a tie goes to the newer row, as in the final order). A row of
    the final top ``keep`` was among them when it came."""

    def __init__(self, keep: int) -> None:
        self.keep = keep
        self.sizes: list[int] = []  # the kept sizes, negated: a max-heap

    def __call__(self, blob: bytes | None) -> bool:
        size = varint(blob)
        if len(self.sizes) < self.keep:
            heapq.heappush(self.sizes, -size)
            return True
        if size < -self.sizes[0]:
            heapq.heapreplace(self.sizes, -size)
            return True
        return False


def _among(blob: bytes | None) -> bool:
    walk = getattr(_walks, "current", None)
    return walk(blob) if walk is not None else True


def prepare(conn: sqlite3.Connection) -> None:
    """Register the SQL function on ``conn`` (once, when the connection opens)."""
    conn.create_function(FUNCTION, 1, _among)


@contextmanager
def walking(keep: int) -> Iterator[None]:
    """The statements this thread runs in the block mark the ``keep`` shortest rows."""
    _walks.current = Shortest(keep)
    try:
        yield
    finally:
        _walks.current = None

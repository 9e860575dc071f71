"""Results kept per session, so a repeated query or page costs nothing. Bounded: at most
``entries`` results per session (least recently used go first) and :data:`MAX_SESSIONS`
sessions."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import Any
from urllib.parse import urlsplit, urlunsplit

MAX_SESSIONS = 64


def normal_query(query: str) -> str:
    return " ".join(query.split()).casefold()


def normal_url(url: str) -> str:
    """The URL without its fragment, its scheme and host lower-cased."""
    parts = urlsplit(url.strip())
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), parts.path or "/",
                       parts.query, ""))


class SessionCache:
    def __init__(self) -> None:
        self._sessions: OrderedDict[str, OrderedDict[Hashable, Any]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, session: str, key: Hashable) -> Any:
        with self._lock:
            entries = self._sessions.get(session)
            if entries is None or key not in entries:
                return None
            entries.move_to_end(key)
            self._sessions.move_to_end(session)
            return entries[key]

    def put(self, session: str, key: Hashable, value: Any, entries: int) -> None:
        if entries <= 0:
            return
        with self._lock:
            held = self._sessions.setdefault(session, OrderedDict())
            self._sessions.move_to_end(session)
            held[key] = value
            held.move_to_end(key)
            while len(held) > entries:
                held.popitem(last=False)
            while len(self._sessions) > MAX_SESSIONS:
                self._sessions.popitem(last=False)

    def size(self, session: str) -> int:
        with self._lock:
            return len(self._sessions.get(session) or ())

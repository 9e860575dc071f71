"""The fake Mem0 server's memory store: memories in a dict, the v2 filter language
(``AND``/``OR``/``NOT``, ``in``/``ne``/``*``, ``metadata``) and a word-overlap "semantic" search.

Good enough to test a client against: what is added can be found again with words it contains,
and filters decide whose memories a search may see.
"""

from __future__ import annotations

import re
import threading
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset("a an and are at be do does for from i in is it me my of on or so that the "
                  "to was what when where which who why with you your".split())
ENTITY_FIELDS = ("user_id", "agent_id", "app_id", "run_id")


def words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP}


def now() -> str:
    return datetime.now(timezone.utc).isoformat()


@dataclass
class Memory:
    id: str
    memory: str
    user_id: str | None = None
    agent_id: str | None = None
    app_id: str | None = None
    run_id: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    created_at: str = field(default_factory=now)
    updated_at: str = field(default_factory=now)

    def as_json(self, score: float | None = None) -> dict[str, Any]:
        data = {"id": self.id, "memory": self.memory, "user_id": self.user_id,
                "agent_id": self.agent_id, "app_id": self.app_id, "run_id": self.run_id,
                "metadata": dict(self.metadata), "categories": [],
                "created_at": self.created_at, "updated_at": self.updated_at}
        if score is not None:
            data["score"] = round(score, 4)
        return data


class FilterError(ValueError):
    """A filter the fake does not understand (the server answers 400)."""


def matches(memory: Memory, filters: Any) -> bool:
    """Whether ``memory`` passes a v2 filter (a mapping; several keys must all hold)."""
    if not isinstance(filters, dict):
        raise FilterError(f"filters must be an object, not {type(filters).__name__}")
    for key, condition in filters.items():
        if key == "AND":
            ok = all(matches(memory, part) for part in _parts(condition, key))
        elif key == "OR":
            ok = any(matches(memory, part) for part in _parts(condition, key))
        elif key == "NOT":
            ok = not any(matches(memory, part) for part in _parts(condition, key))
        elif key in ENTITY_FIELDS:
            ok = _compare(getattr(memory, key), condition)
        elif key == "metadata":
            if not isinstance(condition, dict):
                raise FilterError("a metadata filter is an object of key/value pairs")
            ok = all(_compare(memory.metadata.get(k), v) for k, v in condition.items())
        else:
            raise FilterError(f"unsupported filter field {key!r}")
        if not ok:
            return False
    return True


def check(filters: Any) -> None:
    """Raise :class:`FilterError` for a filter the fake does not understand, whatever the
    store holds."""
    if not isinstance(filters, dict):
        raise FilterError(f"filters must be an object, not {type(filters).__name__}")
    for key, condition in filters.items():
        if key in ("AND", "OR", "NOT"):
            for part in _parts(condition, key):
                check(part)
        elif key == "metadata" and not isinstance(condition, dict):
            raise FilterError("a metadata filter is an object of key/value pairs")
        elif key not in (*ENTITY_FIELDS, "metadata"):
            raise FilterError(f"unsupported filter field {key!r}")


def _parts(condition: Any, key: str) -> list[Any]:
    if not isinstance(condition, list):
        raise FilterError(f"{key} takes a list of filters")
    return condition


def _compare(value: Any, condition: Any) -> bool:
    if condition == "*":
        return value is not None
    if isinstance(condition, dict):
        checks = {"eq": lambda v: value == v, "ne": lambda v: value != v,
                  "in": lambda v: value in v, "contains": lambda v: v in str(value or "")}
        unknown = set(condition) - set(checks)
        if unknown:
            raise FilterError(f"unsupported operator {sorted(unknown)[0]!r}")
        return all(checks[op](v) for op, v in condition.items())
    return value == condition


class MemoryStore:
    """Thread-safe memories keyed by id."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.memories: dict[str, Memory] = {}

    def add(self, text: str, entity: dict[str, Any], metadata: dict[str, Any]) -> Memory:
        memory = Memory(str(uuid.uuid4()), text, metadata=dict(metadata),
                        **{k: entity.get(k) for k in ENTITY_FIELDS})
        with self.lock:
            self.memories[memory.id] = memory
        return memory

    def select(self, filters: dict[str, Any] | None) -> list[Memory]:
        if filters is not None:
            check(filters)
        with self.lock:
            everything = list(self.memories.values())
        return [m for m in everything if filters is None or matches(m, filters)]

    def search(self, query: str, filters: dict[str, Any] | None,
               top_k: int) -> list[tuple[Memory, float]]:
        wanted = words(query)
        scored = []
        for memory in self.select(filters):
            overlap = len(wanted & words(memory.memory))
            if overlap:
                scored.append((memory, overlap / max(len(wanted), 1)))
        scored.sort(key=lambda pair: pair[1], reverse=True)
        return scored[:top_k]

    def get(self, memory_id: str) -> Memory | None:
        with self.lock:
            return self.memories.get(memory_id)

    def update(self, memory_id: str, text: str | None,
               metadata: dict[str, Any] | None) -> Memory | None:
        with self.lock:
            memory = self.memories.get(memory_id)
            if memory is not None:
                if text is not None:
                    memory.memory = text
                if metadata is not None:
                    memory.metadata = dict(metadata)
                memory.updated_at = now()
            return memory

    def delete(self, memory_id: str) -> bool:
        with self.lock:
            return self.memories.pop(memory_id, None) is not None

"""The todo tool: one task list per session, kept in memory for the life of the kernel.

A resumed session (a new process, ``--resume``) finds its list again: the first todo call of
a session the store does not know restores the list from the last todo result in the
conversation history."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from typing import Any

from hermes_agent.api import ToolCallContext, tool_error

from .schemas import TODO_STATUSES


def _validate(items: Any) -> list[dict[str, str]] | str:
    """The items as clean dicts, or an error message naming the first bad item."""
    if isinstance(items, str):
        try:
            items = json.loads(items)
        except json.JSONDecodeError:
            return "todos must be a list of {id, content, status} objects, not a string."
    if not isinstance(items, list):
        return f"todos must be a list, not {type(items).__name__}."
    clean: list[dict[str, str]] = []
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            return f"todos[{index}] must be an object with id, content and status."
        item_id = str(item.get("id", "")).strip()
        content = str(item.get("content", "")).strip()
        status = str(item.get("status", "pending")).strip() or "pending"
        if not item_id:
            return f"todos[{index}] has no id."
        if status not in TODO_STATUSES:
            return (f"todos[{index}] has status {status!r}; use one of "
                    f"{', '.join(TODO_STATUSES)}.")
        clean.append({"id": item_id, "content": content, "status": status})
    return clean


#: a list lives as long as the kernel (a gateway's runs for weeks) and every todo result
#: repeats it whole, so merging in a loop must not grow it without bound
MAX_ITEMS = 200
MAX_CONTENT_CHARS = 2000


def _too_big(current: list[dict[str, str]], items: list[dict[str, str]],
             merge: bool) -> str | None:
    """Why writing ``items`` would make the list too big, or None."""
    long = next((i for i in items if len(i["content"]) > MAX_CONTENT_CHARS), None)
    if long is not None:
        return (f"item {long['id']!r} is {len(long['content']):,} characters; an item is at "
                f"most {MAX_CONTENT_CHARS:,}: say the task in a line and keep details in a file.")
    ids = {i["id"] for i in current} | {i["id"] for i in items} if merge else \
        {i["id"] for i in items}
    if len(ids) > MAX_ITEMS:
        return (f"the list would hold {len(ids)} items, over {MAX_ITEMS}: drop finished or "
                "cancelled items (replace the list without them) before adding more.")
    return None


def from_history(history: list[dict[str, Any]]) -> list[dict[str, str]] | None:
    """The list the last successful todo call returned in ``history``, if any."""
    todo_calls = {call.get("id") for message in history if message.get("role") == "assistant"
                  for call in message.get("tool_calls") or ()
                  if (call.get("function") or {}).get("name") == "todo"}
    for message in reversed(history):
        if message.get("role") != "tool" or message.get("tool_call_id") not in todo_calls:
            continue
        try:
            result = json.loads(message.get("content") or "")
        except (TypeError, json.JSONDecodeError):
            continue
        items = _validate(result.get("todos")) if isinstance(result, dict) else None
        if isinstance(items, list):
            return items
    return None


@dataclass
class TodoStore:
    lists: dict[str, list[dict[str, str]]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def read(self, key: str) -> list[dict[str, str]]:
        with self._lock:
            return [dict(item) for item in self.lists.get(key, [])]

    def write(self, key: str, items: list[dict[str, str]], merge: bool) -> list[dict[str, str]]:
        with self._lock:
            if not merge:
                self.lists[key] = [dict(i) for i in {i["id"]: i for i in items}.values()]
            else:
                current = self.lists.setdefault(key, [])
                index = {item["id"]: item for item in current}
                for item in items:
                    if item["id"] in index:
                        existing = index[item["id"]]
                        existing["status"] = item["status"]
                        if item["content"]:
                            existing["content"] = item["content"]
                    else:
                        index[item["id"]] = dict(item)
                        current.append(index[item["id"]])
            return [dict(item) for item in self.lists[key]]

    def restore(self, key: str, history: list[dict[str, Any]]) -> None:
        """Give a session this store has not seen its list from the conversation history."""
        with self._lock:
            if key in self.lists:
                return
        items = from_history(history)
        with self._lock:
            self.lists.setdefault(key, items or [])

    def handle(self, args: dict[str, Any], ctx: ToolCallContext) -> str:
        key = ctx.state_key
        if ctx.history is not None:
            self.restore(key, ctx.history)
        if args.get("todos") is None:
            items = self.read(key)
        else:
            clean = _validate(args["todos"])
            if isinstance(clean, str):
                return tool_error(clean)
            if not args.get("merge") and any(not i["content"] for i in clean):
                return tool_error("Every item needs content when replacing the list "
                                    "(or pass merge=true to update items by id).")
            if (problem := _too_big(self.read(key), clean, bool(args.get("merge")))):
                return tool_error(problem)
            items = self.write(key, clean, bool(args.get("merge")))
        summary = {status: sum(1 for i in items if i["status"] == status)
                   for status in TODO_STATUSES}
        return json.dumps({"todos": items, "summary": {"total": len(items), **summary}},
                          ensure_ascii=False)

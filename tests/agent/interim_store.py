"""A small SQLite session store for the agent tests, used only while the builtin ``sqlite``
session store is not installed in this tree. It implements just the methods the loop calls."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (id TEXT PRIMARY KEY, source TEXT, model TEXT,
  parent_session_id TEXT, system_prompt TEXT, title TEXT UNIQUE, started_at REAL,
  ended_at REAL, end_reason TEXT, message_count INTEGER DEFAULT 0,
  input_tokens INTEGER DEFAULT 0, output_tokens INTEGER DEFAULT 0,
  cache_read_tokens INTEGER DEFAULT 0, cache_write_tokens INTEGER DEFAULT 0,
  reasoning_tokens INTEGER DEFAULT 0, estimated_cost_usd REAL, api_call_count INTEGER DEFAULT 0);
CREATE TABLE IF NOT EXISTS messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT,
  role TEXT, content TEXT, tool_name TEXT, tool_calls TEXT, tool_call_id TEXT,
  finish_reason TEXT, reasoning TEXT, reasoning_details TEXT, timestamp REAL);
"""


class InterimStore:
    name = "sqlite"

    def __init__(self, path: Path):
        self.db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self.db.row_factory = sqlite3.Row
        self.db.executescript(SCHEMA)
        self.lock = threading.Lock()

    def _exec(self, sql: str, *args: Any) -> Any:
        with self.lock:
            return self.db.execute(sql, args).fetchall()

    def create_session(self, session_id: str, source: str, model: str | None = None,
                       parent_session_id: str | None = None, **_: Any) -> str:
        self._exec("INSERT INTO sessions (id, source, model, parent_session_id, started_at) "
                   "VALUES (?, ?, ?, ?, ?)", session_id, source, model, parent_session_id,
                   time.time())
        return session_id

    def get_session(self, session_id: str) -> dict[str, Any] | None:
        rows = self._exec("SELECT * FROM sessions WHERE id = ?", session_id)
        return dict(rows[0]) if rows else None

    def update_system_prompt(self, session_id: str, prompt: str) -> None:
        self._exec("UPDATE sessions SET system_prompt = ? WHERE id = ?", prompt, session_id)

    def append_message(self, session_id: str, role: str, content: str | None = None, *,
                       tool_name: str | None = None, tool_calls: Any = None,
                       tool_call_id: str | None = None, finish_reason: str | None = None,
                       reasoning: str | None = None, reasoning_details: Any = None,
                       **_: Any) -> int:
        self._exec("INSERT INTO messages (session_id, role, content, tool_name, tool_calls, "
                   "tool_call_id, finish_reason, reasoning, reasoning_details, timestamp) "
                   "VALUES (?,?,?,?,?,?,?,?,?,?)", session_id, role, content, tool_name,
                   json.dumps(tool_calls) if tool_calls else None, tool_call_id, finish_reason,
                   reasoning, json.dumps(reasoning_details) if reasoning_details else None,
                   time.time())
        self._exec("UPDATE sessions SET message_count = message_count + 1 WHERE id = ?",
                   session_id)
        return 0

    def get_messages_as_conversation(self, session_id: str) -> list[dict[str, Any]]:
        out = []
        for row in self._exec("SELECT * FROM messages WHERE session_id = ? ORDER BY id",
                              session_id):
            message: dict[str, Any] = {"role": row["role"], "content": row["content"]}
            if row["tool_calls"]:
                message["tool_calls"] = json.loads(row["tool_calls"])
            if row["tool_call_id"]:
                message["tool_call_id"] = row["tool_call_id"]
            if row["tool_name"]:
                message["tool_name"] = row["tool_name"]
            out.append(message)
        return out

    def replace_messages(self, session_id: str, messages: list[dict[str, Any]]) -> None:
        self._exec("DELETE FROM messages WHERE session_id = ?", session_id)
        for m in messages:
            self.append_message(session_id, m["role"], m.get("content"),
                                tool_name=m.get("tool_name"), tool_calls=m.get("tool_calls"),
                                tool_call_id=m.get("tool_call_id"))

    def update_token_counts(self, session_id: str, input_tokens: int = 0, output_tokens: int = 0,
                            cache_read_tokens: int = 0, cache_write_tokens: int = 0,
                            reasoning_tokens: int = 0, estimated_cost_usd: float | None = None,
                            api_call_count: int = 0, **_: Any) -> None:
        self._exec("UPDATE sessions SET input_tokens = input_tokens + ?, output_tokens = "
                   "output_tokens + ?, cache_read_tokens = cache_read_tokens + ?, "
                   "cache_write_tokens = cache_write_tokens + ?, reasoning_tokens = "
                   "reasoning_tokens + ?, estimated_cost_usd = COALESCE(estimated_cost_usd, 0) "
                   "+ COALESCE(?, 0), api_call_count = api_call_count + ? WHERE id = ?",
                   input_tokens, output_tokens, cache_read_tokens, cache_write_tokens,
                   reasoning_tokens, estimated_cost_usd, api_call_count, session_id)

    def end_session(self, session_id: str, end_reason: str) -> None:
        self._exec("UPDATE sessions SET ended_at = ?, end_reason = ? WHERE id = ?", time.time(),
                   end_reason, session_id)

    def reopen_session(self, session_id: str) -> None:
        self._exec("UPDATE sessions SET ended_at = NULL, end_reason = NULL WHERE id = ?",
                   session_id)

    def set_session_title(self, session_id: str, title: str) -> bool:
        self._exec("UPDATE sessions SET title = ? WHERE id = ?", title, session_id)
        return True

    def resolve_session_by_title(self, title: str) -> str | None:
        rows = self._exec("SELECT id FROM sessions WHERE title = ?", title)
        return rows[0]["id"] if rows else None

    def list_sessions(self, source: str | None = None, limit: int = 20) -> list[dict[str, Any]]:
        rows = self._exec("SELECT * FROM sessions WHERE (? IS NULL OR source = ?) "
                          "ORDER BY started_at DESC LIMIT ?", source, source, limit)
        return [dict(r) for r in rows]


def register_if_missing(kernel: Any) -> None:
    """Install the interim store as ``sqlite`` unless a real one is already installed."""
    if "sqlite" in kernel.slots.installed("session_store"):
        return
    store = InterimStore(Path(kernel.home) / "state.db")
    kernel.register_plugin(lambda ctx: ctx.register_session_store(store), "interim-sessions")

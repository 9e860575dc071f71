"""Owner: the builtin plugin `sessions`. :class:`SessionSql`: every statement of the shared
session-store methods in one :class:`~.dialect.SqlDialect`, made once when a store class is
made (``sql = SessionSql(DIALECT)``), so each is a constant of that store.
"""

from __future__ import annotations

from collections.abc import Iterable

from .dialect import SqlDialect
from .lineage import LineageSql

SESSION_FIELDS = ("user_id", "model", "model_config", "system_prompt", "parent_session_id",
                  "title")
COST_FIELDS = ("cost_status", "cost_source", "pricing_version", "billing_provider",
               "billing_base_url", "billing_mode")
TOKENS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens",
          "reasoning_tokens", "api_call_count")
MESSAGE_COLUMNS = ("session_id", "role", "content", "tool_call_id", "tool_calls", "tool_name",
                   "timestamp", "token_count", "finish_reason", "reasoning",
                   "reasoning_content", "reasoning_details", "codex_reasoning_items",
                   "codex_message_items", "provenance")
MESSAGE_SELECT = "id, " + ", ".join(MESSAGE_COLUMNS)

def _token_update(d: SqlDialect, absolute: bool) -> str:
    if absolute:
        sets = [f"{c} = ?" for c in TOKENS]
        costs = ["estimated_cost_usd = ?{float}", "actual_cost_usd = ?{float}"]
    else:
        sets = [f"{c} = COALESCE({c}, 0) + ?" for c in TOKENS]
        costs = [f"{c} = CASE WHEN ?{{float}} IS NULL THEN {c} ELSE COALESCE({c}, 0) + "
                 "?{float} END" for c in ("estimated_cost_usd", "actual_cost_usd")]
    sets += [f"{c} = COALESCE(?, {c})" for c in (*COST_FIELDS, "model")]
    return d.sql(f"UPDATE sessions SET {', '.join(sets + costs)} WHERE id = ?")


def _insert(d: SqlDialect, table: str, columns: Iterable[str], tail: str = "") -> str:
    cols = list(columns)
    return d.sql(f"INSERT INTO {table} ({', '.join(cols)}) "
                 f"VALUES ({', '.join('?' * len(cols))}){tail}")


class SessionSql:
    """The statements of the shared store methods in one dialect, made once."""

    def __init__(self, dialect: SqlDialect):
        d = self.dialect = dialect
        q = d.sql
        self.lineage = LineageSql(d)
        self.session = q("SELECT * FROM sessions WHERE id = ?")
        self.session_exists = q("SELECT 1 FROM sessions WHERE id = ?")
        self.title_exists = q("SELECT 1 FROM sessions WHERE title = ?")
        self.create_session = _insert(d, "sessions", ("id", "source", "started_at",
                                                      *SESSION_FIELDS))
        self.end = q("UPDATE sessions SET ended_at = ?, end_reason = ? WHERE id = ?")
        self.reopen = q("UPDATE sessions SET ended_at = NULL, end_reason = NULL WHERE id = ?")
        self.system_prompt = q("UPDATE sessions SET system_prompt = ? WHERE id = ?")
        self.model = q("UPDATE sessions SET model = ?, model_config = COALESCE(?, model_config) "
                       "WHERE id = ?")
        self.add_tokens = _token_update(d, False)
        self.set_tokens = _token_update(d, True)
        self.count_message = q("UPDATE sessions SET message_count = message_count + 1, "
                               "tool_call_count = tool_call_count + ? WHERE id = ?")
        self.insert_message = _insert(d, "messages", MESSAGE_COLUMNS,
                                      " RETURNING id" if d.numbered_messages else "")
        self.insert_messages = _insert(d, "messages", MESSAGE_COLUMNS)
        self.insert_numbered = _insert(d, "messages", ("id", *MESSAGE_COLUMNS))
        self.messages = q(f"SELECT {MESSAGE_SELECT} FROM messages WHERE session_id = ? "
                          "ORDER BY id LIMIT ? OFFSET ?")
        self.delete_messages = q("DELETE FROM messages WHERE session_id = ?")
        self.zero_counts = q("UPDATE sessions SET message_count = 0, tool_call_count = 0 "
                             "WHERE id = ?")
        self.recount = q("UPDATE sessions SET message_count = (SELECT COUNT(*) FROM messages "
                         "WHERE session_id = ?), tool_call_count = ? WHERE id = ?")
        self.set_counts = q("UPDATE sessions SET message_count = ?, tool_call_count = ? "
                            "WHERE id = ?")
        self.orphan_children = q("UPDATE sessions SET parent_session_id = NULL "
                                 "WHERE parent_session_id = ?")
        self.delete_session = q("DELETE FROM sessions WHERE id = ?")
        self.other_title = q("SELECT id FROM sessions WHERE title = ? AND id != ?")
        self.set_title = q("UPDATE sessions SET title = ? WHERE id = ?")
        self.set_new_title = q("UPDATE sessions SET title = ? WHERE id = ? AND title IS NULL")
        self.id_prefix = q("SELECT id FROM sessions WHERE id LIKE ? ESCAPE '\\' LIMIT 2")
        self.sessions = q("SELECT * FROM sessions ORDER BY started_at DESC LIMIT ? OFFSET ?")
        self.sessions_of = q("SELECT * FROM sessions WHERE source = ? ORDER BY started_at DESC "
                             "LIMIT ? OFFSET ?")
        self.last_used_of = q(  # the latest message (or the start) of each session
            "SELECT s.id FROM sessions s WHERE s.source = ? ORDER BY COALESCE((SELECT "
            "MAX(m.timestamp) FROM messages m WHERE m.session_id = s.id), s.started_at) DESC "
            "LIMIT 1")
        self.ids = q(f"SELECT id FROM sessions ORDER BY {d.session_order}")
        self.ids_of = q(f"SELECT id FROM sessions WHERE source = ? ORDER BY {d.session_order}")
        ended = "SELECT id FROM sessions WHERE ended_at IS NOT NULL AND started_at < ?"
        self.ended_before = q(ended)
        self.ended_before_of = q(ended + " AND source = ?")

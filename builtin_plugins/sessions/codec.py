"""Turning message values into column values and back (shared with every session store, see
``hermes_agent.api``), plus reading a message row of SQLite and SQLite's SQL dialect."""

from __future__ import annotations

import sqlite3
from typing import Any

from hermes_agent.kits.sql.dialect import SqlDialect
from hermes_agent.kits.sql.values import (
    JSON_COLUMNS, JSON_PREFIX, clean_optional as clean_text, decode_content, decode_json,
    encode_content, encode_json, sanitize_title, tool_call_count,
)

__all__ = ["JSON_COLUMNS", "JSON_PREFIX", "SQLITE", "clean_text", "decode_content",
           "decode_json", "encode_content", "encode_json", "message_row", "sanitize_title",
           "tool_call_count"]


def message_row(row: sqlite3.Row) -> dict[str, Any]:
    out = {key: row[key] for key in row.keys() if key != "search_text"}
    out["content"] = decode_content(out.get("content"))
    for col in JSON_COLUMNS:
        if col in out:
            out[col] = decode_json(out[col])
    return out


#: SQLite's SQL for the statements every SQL store shares (``?`` marks, sqlite3.Row rows)
SQLITE = SqlDialect("sqlite", message_row=message_row)

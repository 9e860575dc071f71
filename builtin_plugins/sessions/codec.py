"""Turning message values into column values and back (JSON columns, multimodal content)."""

from __future__ import annotations

import json
import re
import sqlite3
from typing import Any

from . import inputs

# Content that is a list of parts (multimodal) is stored as JSON behind this marker; stores
# written by Hermes Agent use the same marker, so imported rows decode alike.
JSON_PREFIX = "\x00json:"
JSON_COLUMNS = ("tool_calls", "reasoning_details", "codex_reasoning_items", "codex_message_items")
MAX_TITLE = 100
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def clean_text(value: str | None) -> str | None:
    """Text SQLite can store (lone surrogates repaired, see :mod:`.inputs`)."""
    return None if value is None else inputs.clean_text(value)


def encode_content(content: Any) -> str | None:
    if content is None or isinstance(content, str):
        return clean_text(content)
    if isinstance(content, (int, float)):
        return str(content)
    return JSON_PREFIX + inputs.clean_text(json.dumps(content, ensure_ascii=False, default=str))


def decode_content(value: Any) -> Any:
    if isinstance(value, str) and value.startswith(JSON_PREFIX):
        try:
            return json.loads(value[len(JSON_PREFIX):])
        except ValueError:
            return value
    return value


def encode_json(value: Any) -> str | None:
    """A JSON column: text is kept as given (already JSON), other values are serialised."""
    if value is None or value == [] or value == {}:
        return None
    if isinstance(value, str):
        return clean_text(value)
    return inputs.clean_text(json.dumps(value, ensure_ascii=False, default=str))


def decode_json(value: Any) -> Any:
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except ValueError:
        return value


def message_row(row: sqlite3.Row) -> dict[str, Any]:
    out = {key: row[key] for key in row.keys() if key != "search_text"}
    out["content"] = decode_content(out.get("content"))
    for col in JSON_COLUMNS:
        if col in out:
            out[col] = decode_json(out[col])
    return out


def sanitize_title(title: str | None) -> str | None:
    """Trim, drop control characters, collapse whitespace, cap at 100; empty means no title."""
    if title is None:
        return None
    text = " ".join(_CONTROL.sub(" ", inputs.clean_text(title)).split())
    return text[:MAX_TITLE].rstrip() or None


def tool_call_count(tool_calls: Any) -> int:
    if not tool_calls:
        return 0
    if isinstance(tool_calls, str):
        try:
            tool_calls = json.loads(tool_calls)
        except ValueError:
            return 1
    return len(tool_calls) if isinstance(tool_calls, list) else 1

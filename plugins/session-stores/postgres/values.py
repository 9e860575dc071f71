"""Column values for PostgreSQL, whose text cannot hold NUL characters.

The shared codec (``hermes_agent.api``) marks JSON content with ``JSON_PREFIX``, which starts
with NUL; here that marker is stored as :data:`PG_JSON_PREFIX` (a Unicode noncharacter, never
in real text) and turned back on reading. Any other NUL in text is stored as U+FFFD, as the
shared edge already does for lone surrogates.
"""

from __future__ import annotations

from typing import Any

from hermes_agent.api import JSON_COLUMNS, JSON_PREFIX, decode_content, decode_json

PG_JSON_PREFIX = "\ufdd0json:"


def to_pg(value: Any) -> Any:
    """A value bound as a parameter: text made storable."""
    if not isinstance(value, str) or "\x00" not in value:
        return value
    if value.startswith(JSON_PREFIX):
        value = PG_JSON_PREFIX + value[len(JSON_PREFIX):]
    return value.replace("\x00", "\ufffd")


def from_pg_content(value: Any) -> Any:
    """Stored content back to what the shared codec wrote."""
    if isinstance(value, str) and value.startswith(PG_JSON_PREFIX):
        value = JSON_PREFIX + value[len(PG_JSON_PREFIX):]
    return value


def message_row(row: dict[str, Any]) -> dict[str, Any]:
    """A message as ``get_messages`` returns it (content and JSON columns decoded)."""
    out = {k: v for k, v in row.items() if k not in ("search_text", "search_tsv")}
    out["content"] = decode_content(from_pg_content(out.get("content")))
    for col in JSON_COLUMNS:
        if col in out:
            out[col] = decode_json(out[col])
    return out

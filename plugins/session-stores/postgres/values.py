"""Column values for PostgreSQL, whose text cannot hold NUL characters.

The shared codec (``hermes_agent.api``) marks JSON content with ``JSON_PREFIX``, which starts
with NUL; here that marker is stored as :data:`PG_JSON_PREFIX` (a Unicode noncharacter, never
in real text) and turned back on reading. Any other NUL in text is stored as U+FFFD, as the
shared edge already does for lone surrogates. :data:`POSTGRES` is PostgreSQL's dialect of the
SQL every SQL store shares (``hermes_agent.kits.sql.dialect.SqlDialect``): values go through :func:`to_pg`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from hermes_agent.kits.sql.dialect import SqlDialect
from hermes_agent.kits.sql.values import JSON_COLUMNS, JSON_PREFIX, decode_content, decode_json

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


def params(values: Iterable[Any]) -> tuple[Any, ...]:
    """Parameters as bound (:func:`to_pg` of each)."""
    return tuple(to_pg(v) for v in values)


def _executemany(conn: Any, sql: str, rows: list[Any]) -> None:
    with conn.cursor() as cur:
        cur.executemany(sql, rows)


def _tuple_rows(conn: Any, sql: str, args: list[Any]) -> list[tuple[Any, ...]]:
    from psycopg.rows import tuple_row

    with conn.cursor(row_factory=tuple_row) as cur:
        return cur.execute(sql, args).fetchall()


#: PostgreSQL's SQL for the statements every SQL store shares (psycopg, rows as dicts)
POSTGRES = SqlDialect(
    "postgres", mark="%s", list_param=True, no_limit=None, param=to_pg, params=params,
    stored_content=from_pg_content, dict_rows=True, message_row=message_row,
    text_cast="::text", float_cast="::float8", bigint_cast="::bigint",
    session_order="started_at, id",
    model_order="estimated_cost_usd DESC NULLS LAST, SUM(input_tokens) + SUM(output_tokens) DESC",
    numbered_messages=True, executemany=_executemany, tuple_rows=_tuple_rows,
    after_kept_ids="SELECT setval(pg_get_serial_sequence('messages', 'id'), "
                   "GREATEST((SELECT max(id) FROM messages), 1))")

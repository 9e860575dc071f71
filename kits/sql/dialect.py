"""Owner: the builtin plugin `sessions`. :class:`SqlDialect`: what one database's SQL does its
own way (parameter marks, lists, casts, how values are bound and rows come back). The other
modules of this kit write their SQL once, ``?``-marked, and a dialect turns it into a store's
own. A leaf of the kit: standard library only.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any


def _same(value: Any) -> Any:
    return value


@dataclass(frozen=True)
class SqlDialect:
    """How one database's SQL differs from the ``?``-marked SQL written here."""

    name: str
    mark: str = "?"  # a parameter's mark
    list_param: bool = False  # a list is one parameter (``= ANY(%s)``), not a mark per item
    no_limit: Any = -1  # the LIMIT value that means every row
    param: Callable[[Any], Any] = _same  # a value as it is bound (made storable)
    params: Callable[[Iterable[Any]], tuple[Any, ...]] = tuple  # ``param`` of each
    stored_content: Callable[[Any], Any] = _same  # stored content back to the codec's text
    dict_rows: bool = False  # rows already are dicts (else each is copied into one)
    message_row: Callable[[Any], dict[str, Any]] = dict  # a message row as get_messages gives it
    text_cast: str = ""  # after a parameter that is a value in a SELECT list
    float_cast: str = ""  # after a cost parameter (a float or NULL)
    bigint_cast: str = ""  # after a sum of integer columns
    session_order: str = "started_at"  # the order of export_all
    model_order: str = "estimated_cost_usd DESC, input_tokens + output_tokens DESC"  # usage
    numbered_messages: bool = False  # INSERT of a message returns its id (RETURNING id)
    executemany: Callable[[Any, str, list[Any]], Any] = (  # one statement over many rows
        lambda conn, sql, rows: conn.executemany(sql, rows))
    after_kept_ids: str = ""  # run after messages were inserted with their ids
    tuple_rows: Callable[[Any, str, list[Any]], list[Any]] = (  # rows indexed by position
        lambda conn, sql, args: conn.execute(sql, args).fetchall())

    def sql(self, text: str) -> str:
        """``text`` (``?`` marks, ``{text}``/``{float}``/``{bigint}`` casts) in this SQL."""
        text = text.format(text=self.text_cast, float=self.float_cast, bigint=self.bigint_cast)
        if self.mark == "?":
            return text
        return text.replace("%", "%%").replace("?", self.mark)

    def in_list(self, column: str, values: list[Any], negate: bool = False
                ) -> tuple[str, list[Any]]:
        """SQL true when ``column`` is (or with ``negate`` is not) one of ``values``, and its
        parameters."""
        if self.list_param:
            return (f"{'NOT ' if negate else ''}({column} = ANY({self.mark}))",
                    [[self.param(v) for v in values]])
        marks = ", ".join([self.mark] * len(values))
        return f"{column} {'NOT IN' if negate else 'IN'} ({marks})", list(values)

    def dicts(self, rows: list[Any]) -> list[dict[str, Any]]:
        return rows if self.dict_rows else [dict(r) for r in rows]

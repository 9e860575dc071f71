"""Owner: the builtin plugin `plugin_admin`.

Small text helpers the terminal surfaces share: counted nouns, shortened lines and
aligned tables with a header row."""

from __future__ import annotations

from collections.abc import Sequence


def plural(count: int, noun: str, plural_form: str | None = None) -> str:
    """``plural(1, "model call")`` -> ``"1 model call"``; ``plural(2, ...)`` -> ``"2 model calls"``."""
    if count == 1:
        return f"1 {noun}"
    return f"{count} {plural_form or noun + 's'}"


def ellipsize(text: str, limit: int) -> str:
    """``text`` on one line, cut to ``limit`` characters with an ellipsis when longer."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:max(0, limit - 1)].rstrip() + "…"


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], indent: str = "") -> list[str]:
    """Lines of a table whose columns are as wide as their widest cell (the last column is
    not padded)."""
    widths = [max(len(str(cell)) for cell in column) for column in zip(headers, *rows)]

    def line(cells: Sequence[str]) -> str:
        padded = [str(c).ljust(w) for c, w in zip(cells[:-1], widths)] + [str(cells[-1])]
        return (indent + "  ".join(padded)).rstrip()

    return [line(headers), *(line(row) for row in rows)]

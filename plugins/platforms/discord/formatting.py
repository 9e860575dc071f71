"""The model's markdown for Discord. Discord renders most of it (bold, italics, code, quotes,
lists, links, and ``#`` headings in new clients); what it does not render is adapted: headings
deeper than ``###`` become bold lines, and a table goes in a code block so its columns line up.
Code blocks are left alone."""

from __future__ import annotations

import re

_FENCE = re.compile(r"^\s*(```|~~~)")
_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_TABLE_ROW = re.compile(r"^\s*\|.*\|\s*$")


def format_message(text: str) -> str:
    out: list[str] = []
    table: list[str] = []
    fenced = False

    def flush_table() -> None:
        if table:
            out.extend(["```", *table, "```"] if len(table) > 1 else table)
            table.clear()

    for line in text.splitlines():
        if _FENCE.match(line):
            flush_table()
            fenced = not fenced
            out.append(line)
            continue
        if fenced:
            out.append(line)
            continue
        if _TABLE_ROW.match(line):
            table.append(line)
            continue
        flush_table()
        heading = _HEADING.match(line)
        if heading and len(heading.group(1)) > 3:
            out.append(f"**{heading.group(2)}**")
        else:
            out.append(line)
    flush_table()
    return "\n".join(out)

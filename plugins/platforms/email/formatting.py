"""The model's markdown as the HTML part of a reply: headings, paragraphs, bullet and numbered
lists, fenced code blocks, inline code, bold, italics, strikethrough and links (http, https
and mailto only); everything else is escaped. The plain part is the markdown itself, which
reads well as text."""

from __future__ import annotations

import html
import re

_FENCE = re.compile(r"^[ \t]*(```|~~~)[^\n]*\n(.*?)(?:^[ \t]*\1[ \t]*$|\Z)", re.S | re.M)
_CODE = re.compile(r"(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.S)
_LINK = re.compile(r"\[([^\]\n]+)\]\(((?:https?|mailto):[^\s)]+)\)")
# spans are bounded (and italics hold no "*"), so a line of unpaired markers stays linear
_BOLD = re.compile(r"(\*\*|__)(?=\S)(.{1,400}?)(?<=\S)\1")
_ITALIC = re.compile(r"(?<![\w*])\*(?=[^\s*])([^*]{1,400}?)(?<=[^\s*])\*(?![\w*])")
_STRIKE = re.compile(r"~~(?=\S)(.{1,400}?)(?<=\S)~~")
_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$")
_BULLET = re.compile(r"^[ \t]*[-*+][ \t]+(.*)$")
_NUMBERED = re.compile(r"^[ \t]*\d{1,9}[.)][ \t]+(.*)$")
_SLOT = re.compile(r"\x00(\d+)\x00")
STYLE = ("font-family: -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif; "
         "font-size: 14px; line-height: 1.5")
PRE = "background: #f6f8fa; padding: 8px; border-radius: 4px; overflow-x: auto"


def to_html(markdown: str) -> str:
    """A whole HTML document for ``markdown``."""
    kept: list[str] = []

    def keep(fragment: str) -> str:
        kept.append(fragment)
        return f"\x00{len(kept) - 1}\x00"

    text = markdown.replace("\x00", "").replace("\r\n", "\n")
    text = _FENCE.sub(lambda m: "\n\n" + keep(
        f'<pre style="{PRE}"><code>{html.escape(m.group(2).rstrip(chr(10)))}</code></pre>')
        + "\n\n", text)
    text = _CODE.sub(lambda m: keep(f"<code>{html.escape(m.group(2).strip())}</code>"), text)
    blocks = [_block(block) for block in re.split(r"\n[ \t]*\n", text) if block.strip()]
    body = "\n".join(blocks)
    while _SLOT.search(body):
        body = _SLOT.sub(lambda m: kept[int(m.group(1))], body)
    return (f'<!DOCTYPE html>\n<html><body><div style="{STYLE}">\n{body}\n</div></body></html>\n')


def _block(block: str) -> str:
    lines = block.strip("\n").split("\n")
    if len(lines) == 1 and _SLOT.fullmatch(lines[0].strip()):
        return lines[0].strip()  # a code block on its own
    if heading := _HEADING.match(lines[0].strip()):  # a heading, maybe text right under it
        level = len(heading.group(1))
        rest = "\n".join(lines[1:])
        return f"<h{level}>{_inline(heading.group(2))}</h{level}>" + (
            "\n" + _block(rest) if rest.strip() else "")
    for pattern, tag in ((_BULLET, "ul"), (_NUMBERED, "ol")):
        if all(pattern.match(line) or line.startswith(("  ", "\t")) for line in lines) \
                and pattern.match(lines[0]):
            items: list[str] = []
            for line in lines:
                match = pattern.match(line)
                if match:
                    items.append(match.group(1))
                else:
                    items[-1] += " " + line.strip()
            return f"<{tag}>" + "".join(f"<li>{_inline(item)}</li>" for item in items) + \
                f"</{tag}>"
    return "<p>" + "<br>\n".join(_inline(line) for line in lines) + "</p>"


def _inline(text: str) -> str:
    text = html.escape(text, quote=False)
    text = _LINK.sub(lambda m: f'<a href="{m.group(2).replace(chr(34), "%22")}">'
                     f"{m.group(1)}</a>", text)
    text = _BOLD.sub(r"<strong>\2</strong>", text)
    text = _STRIKE.sub(r"<del>\1</del>", text)
    return _ITALIC.sub(r"<em>\1</em>", text)

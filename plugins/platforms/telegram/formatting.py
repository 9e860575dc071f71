"""The model's markdown as Telegram HTML (``parse_mode: HTML``): bold, italics,
strikethrough, inline code, fenced code blocks, links and headings; everything else is
escaped, so stray ``<``, ``>`` and ``&`` reach the chat as text. Markup the rules below do
not pair up stays as typed. Telegram measures a message's length after the markup is
parsed, in UTF-16 code units (:func:`visible_length`)."""

from __future__ import annotations

import html
import re

_FENCED = re.compile(r"^[ \t]*(```|~~~)[ \t]*([\w+#.-]*)[^\n]*\n(.*?)(?:^[ \t]*\1[ \t]*$|\Z)",
                     re.S | re.M)
_INLINE_CODE = re.compile(r"(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.S)
_LINK = re.compile(r"\[([^\]\n]+)\]\(((?:https?|tg|mailto):[^\s)]+)\)")
_BOLD = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1", re.S)
_ITALIC_STAR = re.compile(r"(?<![\w*])\*(?=[^\s*])(.+?)(?<=[^\s*])\*(?![\w*])", re.S)
_ITALIC_UNDERSCORE = re.compile(r"(?<![\w_])_(?=[^\s_])(.+?)(?<=[^\s_])_(?![\w_])", re.S)
_STRIKE = re.compile(r"~~(?=\S)(.+?)(?<=\S)~~", re.S)
_HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t#]*$", re.M)
_SLOT = "\x00{}\x00"
_SLOT_RE = re.compile(r"\x00(\d+)\x00")


def to_html(markdown: str) -> str:
    """``markdown`` as the HTML subset Telegram accepts."""
    kept: list[str] = []

    def keep(fragment: str) -> str:
        kept.append(fragment)
        return _SLOT.format(len(kept) - 1)

    def fenced(match: re.Match[str]) -> str:
        language, code = match.group(2), match.group(3).rstrip("\n")
        attr = f' class="language-{html.escape(language)}"' if language else ""
        return keep(f"<pre><code{attr}>{html.escape(code, quote=False)}</code></pre>")

    text = _FENCED.sub(fenced, markdown.replace("\x00", ""))
    text = _INLINE_CODE.sub(
        lambda m: keep(f"<code>{html.escape(m.group(2).strip(), quote=False)}</code>"), text)
    text = html.escape(text, quote=False)
    text = _LINK.sub(lambda m: keep(f'<a href="{m.group(2).replace(chr(34), "&quot;")}">')
                     + m.group(1) + keep("</a>"), text)
    text = _HEADING.sub(r"<b>\1</b>", text)
    text = _BOLD.sub(r"<b>\2</b>", text)
    text = _STRIKE.sub(r"<s>\1</s>", text)
    text = _ITALIC_STAR.sub(r"<i>\1</i>", text)
    text = _ITALIC_UNDERSCORE.sub(r"<i>\1</i>", text)
    while _SLOT_RE.search(text):  # a link's text may hold a kept code span
        text = _SLOT_RE.sub(lambda m: kept[int(m.group(1))], text)
    return text


def visible_length(text: str) -> int:
    """How long Telegram counts ``text`` (UTF-16 code units)."""
    return len(text.encode("utf-16-le")) // 2

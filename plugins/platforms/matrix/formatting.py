"""The model's markdown as the HTML Matrix clients render (``format: org.matrix.custom.html``):
bold, italics, strikethrough, inline code, fenced code blocks, links (http, https, mailto) and
headings; line breaks become ``<br>`` outside code blocks, and everything else is escaped, so
stray ``<``, ``>`` and ``&`` reach the room as text. The plain ``body`` stays the markdown."""

from __future__ import annotations

import html
import re

_FENCED = re.compile(r"^[ \t]*(```|~~~)[ \t]*([\w+#.-]*)[^\n]*\n(.*?)(?:^[ \t]*\1[ \t]*$\n?|\Z)",
                     re.S | re.M)
_INLINE_CODE = re.compile(r"(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.S)
_LINK = re.compile(r"\[([^\]\n]+)\]\(((?:https?|mailto):[^\s)]+)\)")
_BOLD = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1", re.S)
_ITALIC_STAR = re.compile(r"(?<![\w*])\*(?=[^\s*])(.+?)(?<=[^\s*])\*(?![\w*])", re.S)
_ITALIC_UNDERSCORE = re.compile(r"(?<![\w_])_(?=[^\s_])(.+?)(?<=[^\s_])_(?![\w_])", re.S)
_STRIKE = re.compile(r"~~(?=\S)(.+?)(?<=\S)~~", re.S)
_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$", re.M)
_SLOT = "\x00{}\x00"
_SLOT_RE = re.compile(r"\x00(\d+)\x00")


def to_html(markdown: str) -> str | None:
    """``markdown`` as Matrix HTML, or None when it has no markup (send it plain)."""
    kept: list[str] = []

    def keep(fragment: str) -> str:
        kept.append(fragment)
        return _SLOT.format(len(kept) - 1)

    def fenced(match: re.Match[str]) -> str:
        language, code = match.group(2), match.group(3).rstrip("\n")
        attr = f' class="language-{html.escape(language)}"' if language else ""
        return keep(f"<pre><code{attr}>{html.escape(code, quote=False)}</code></pre>")

    def heading(match: re.Match[str]) -> str:
        level = len(match.group(1))
        return keep(f"<h{level}>") + match.group(2) + keep(f"</h{level}>")

    source = markdown.replace("\x00", "")
    text = _FENCED.sub(fenced, source)
    text = _INLINE_CODE.sub(
        lambda m: keep(f"<code>{html.escape(m.group(2).strip(), quote=False)}</code>"), text)
    text = html.escape(text, quote=False)
    text = _LINK.sub(lambda m: keep(f'<a href="{m.group(2).replace(chr(34), "&quot;")}">')
                     + m.group(1) + keep("</a>"), text)
    text = _HEADING.sub(heading, text)
    text = _BOLD.sub(r"<strong>\2</strong>", text)
    text = _STRIKE.sub(r"<del>\1</del>", text)
    text = _ITALIC_STAR.sub(r"<em>\1</em>", text)
    text = _ITALIC_UNDERSCORE.sub(r"<em>\1</em>", text)
    if not kept and text == html.escape(source, quote=False):
        return None
    text = text.replace("\n", "<br>\n")
    while _SLOT_RE.search(text):  # a link's text may hold a kept code span
        text = _SLOT_RE.sub(lambda m: kept[int(m.group(1))], text)
    return re.sub(r"(</h\d>|</pre>)<br>\n", r"\1\n", text)

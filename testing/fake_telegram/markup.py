"""Telegram's HTML parse mode, as the fake checks it: the tags Telegram knows, properly
nested; what the user sees is the text without them."""

from __future__ import annotations

from html.parser import HTMLParser

TAGS = {"b", "strong", "i", "em", "u", "ins", "s", "strike", "del", "span", "tg-spoiler", "a",
        "code", "pre", "blockquote", "tg-emoji"}


class MarkupError(ValueError):
    """Telegram's "can't parse entities" reason."""


class _Reader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.text: list[str] = []
        self.open: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in TAGS:
            raise MarkupError(f'Unsupported start tag "{tag}"')
        self.open.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if not self.open or self.open[-1] != tag:
            raise MarkupError(f'Unmatched end tag "{tag}"')
        self.open.pop()

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def html_to_plain(text: str) -> str:
    """The visible text of Telegram HTML, or :class:`MarkupError`."""
    reader = _Reader()
    reader.feed(text)
    reader.close()
    if reader.open:
        raise MarkupError(f'Can\'t find end tag corresponding to start tag "{reader.open[-1]}"')
    return "".join(reader.text)


def utf16_length(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2

"""Exfiltration-shaped URLs: links a model can build to carry data out of a tainted turn.

A URL carries data when the model could have put some in it: a query string or fragment
with a value, a long or random-looking label in front of the domain (``c2VjcmV0.evil.com``),
or a path segment that looks like encoded data. In a tainted turn such a URL is refused in
a tool call (:func:`data_urls`), and in a reply every markdown image (a client fetches it
without a click) and every data-carrying link is replaced by a note (:class:`ReplyFilter`),
unless the URL appeared verbatim in the user's or an untrusted message (the model did not
build it). docs/security.md.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from urllib.parse import urlsplit

URL = re.compile(r"\b(?:https?|ftp|wss?)://[^\s<>\"'`)\]]+", re.IGNORECASE)
IMAGE = re.compile(r"!\[[^\]\n]{0,500}\]\(\s*<?([^)\s>]+)>?[^)\n]*\)")
REMOVED_IMAGE = "[image removed: this turn read untrusted text]"
REMOVED_LINK = "[link removed: it could carry data out of this turn]"
_DATA_LIKE = re.compile(r"^[A-Za-z0-9+/=_-]{24,}$")  # base64, hex, url-safe tokens
MAX_LABEL = 20  # a subdomain label longer than this looks like data


def carries_data(url: str) -> str:
    """Why ``url`` could carry data the model put in it ("" when it cannot)."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return "it cannot be parsed"
    if parts.query:
        return "it has a query string"
    if parts.fragment and len(parts.fragment) > 16:
        return "it has a long fragment"
    host = (parts.hostname or "").rstrip(".")
    labels = host.split(".")
    if not host.replace(".", "").isdigit():
        extra = labels[:-2]  # labels in front of the registered domain (roughly)
        if len(extra) > 2:
            return "its host has many subdomains"
        if any(len(label) > MAX_LABEL or _DATA_LIKE.match(label) for label in extra):
            return "its host has a long or random-looking subdomain"
    if any(_DATA_LIKE.match(segment) for segment in parts.path.split("/")):
        return "its path has an encoded-looking segment"
    if parts.username or parts.password:
        return "it has user information"
    return ""


def data_urls(text: str, known: Callable[[str], bool]) -> list[tuple[str, str]]:
    """``(url, why)`` for each URL in ``text`` that carries data and is not ``known`` (seen
    verbatim in the conversation's user or untrusted text)."""
    found = []
    for match in URL.finditer(text):
        url = match.group(0).rstrip(".,;:!?")
        why = carries_data(url)
        if why and not known(url):
            found.append((url, why))
    return found


def scrub_reply(text: str, known: Callable[[str], bool]) -> tuple[str, int]:
    """``text`` with markdown images and data-carrying links the model built replaced;
    how many were replaced."""
    count = 0

    def image(match: re.Match[str]) -> str:
        nonlocal count
        count += 1
        return REMOVED_IMAGE

    text = IMAGE.sub(image, text)

    def link(match: re.Match[str]) -> str:
        nonlocal count
        url = match.group(0).rstrip(".,;:!?")
        if not carries_data(url) or known(url):
            return match.group(0)
        count += 1
        return REMOVED_LINK + match.group(0)[len(url):]

    return URL.sub(link, text), count


class ReplyFilter:
    """The streaming side of :func:`scrub_reply`: text is passed on at once, except from a
    possible image or URL start (``!``, ``[``, ``http``...) up to the next whitespace, which is
    held until it can be judged (at most ``hold`` characters)."""

    _START = re.compile(r"!\[|\b(?:https?|ftp|wss?):|\b(?:h|ht|htt|https?|f|ft|w|ws)$|!$",
                        re.IGNORECASE)

    def __init__(self, known: Callable[[str], bool], hold: int = 4000):
        self.known, self.hold = known, hold
        self.buffer = ""
        self.removed = 0

    def feed(self, text: str) -> str:
        self.buffer += text
        match = self._START.search(self.buffer)
        if match is None:
            out, self.buffer = self.buffer, ""
            return out
        if len(self.buffer) - match.start() > self.hold:
            return self.flush()
        head, tail = self.buffer[:match.start()], self.buffer[match.start():]
        end = _closed(tail)
        if end is None:
            self.buffer = tail
            return head
        judged, rest = tail[:end], tail[end:]
        self.buffer = ""
        clean, count = scrub_reply(judged, self.known)
        self.removed += count
        return head + clean + self.feed(rest)

    def flush(self) -> str:
        text, self.buffer = self.buffer, ""
        clean, count = scrub_reply(text, self.known)
        self.removed += count
        return clean


def _closed(tail: str) -> int | None:
    """Where the candidate at the start of ``tail`` ends, once it has (None: wait for more)."""
    if tail.startswith("!["):
        close = tail.find(")", tail.find("]("))
        newline = tail.find("\n")
        if "](" in tail and close != -1:
            return close + 1
        if newline != -1 and "](" not in tail[:newline]:
            return newline
        return None
    space = re.search(r"\s", tail)
    return space.start() if space else None

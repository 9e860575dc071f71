"""Encoded text for the injection scan: base64 (the standard alphabet), hex, URL-encoding and rot13 pieces of a text,
decoded, so the rules can be matched against what they say.

Each kind is looked for only when a cheap test on the text's words says it may be there (a
long word for base64 and hex, ``%`` for URL-encoding, a rot13 spelling of a keyword), and
only decodings that are readable text (UTF-8, nearly all printable) are kept, at most
:data:`MAX_DECODED` characters in all. Everything is linear in the text.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import re
from collections.abc import Callable, Iterator
from urllib.parse import unquote_plus

MAX_DECODED = 1 << 20  # characters of decoded text per scan, at most
MAX_PIECES = 512  # encoded pieces tried per kind, at most
LONG_WORD = 16  # a base64 or hex piece holds a word this long, with a digit unless it is long

_BASE64 = re.compile(r"(?<![A-Za-z0-9+/])[A-Za-z0-9+/]{16,}+={0,2}+")
_HEX_ESCAPES = re.compile(r"(?>(?:\\x[0-9a-fA-F]{2}){4,})")
_HEX_SPACED = re.compile(r"(?<![0-9a-zA-Z])[0-9a-fA-F]{2}(?>(?:[ :,-][0-9a-fA-F]{2}){7,})"
                         r"(?![0-9a-zA-Z])")
_HEX_PAIR = re.compile(r"[0-9a-f]{2}")
_HEX_WORD = re.compile(r"[0-9a-f]++")
#: Bytes of printable ASCII text in hex: a hex dump of text is made of them.
_DUMP_PAIRS = frozenset(f"{b:02x}" for b in range(0x20, 0xA0))
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_PERCENT = re.compile(r"%[0-9A-Fa-f]{2}")
_SPACE = re.compile(r"\s")
_ROT13 = str.maketrans("abcdefghijklmnopqrstuvwxyz", "nopqrstuvwxyzabcdefghijklm")
#: Keywords of the rules, rot13-spelled: one among a text's words suggests a rot13 text.
ROT13_WORDS = frozenset(codecs.encode(word, "rot13") for word in (
    "ignore disregard forget previous instructions system prompt jailbroken unrestricted "
    "reveal secrets credentials everything guidelines rules exfiltrate").split())


def readable(data: bytes) -> str | None:
    """``data`` as text when it is UTF-8 and nearly all printable (else None)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if len(text) < 6 or "\ufffd" in text:
        return None
    if text.isprintable():
        return text
    controls = len(_CONTROL.findall(text))  # binary data decodes to control characters
    return text if controls <= 0.05 * len(text) else None


def _base64(piece: str) -> str | None:
    if piece.isdigit() or piece.isalpha() and (piece.islower() or piece.isupper()):
        return None  # a long word or number: base64 of text mixes cases and digits
    body = piece.rstrip("=")
    try:
        data = base64.b64decode(body + "=" * (-len(body) % 4), validate=True)
    except (binascii.Error, ValueError):
        return None
    return readable(data)


def _hex(piece: str) -> str | None:
    digits = "".join(_HEX_PAIR.findall(piece.lower().replace("\\x", "")))
    try:
        return readable(bytes.fromhex(digits))
    except ValueError:
        return None


def _base64_or_hex(piece: str) -> tuple[str, str] | None:
    if len(piece) % 2 == 0 and _HEX_WORD.fullmatch(piece.lower()):
        plain = _hex(piece)
        return ("hex", plain) if plain else None
    plain = _base64(piece)
    return ("base64", plain) if plain else None


def _hex_of(piece: str) -> tuple[str, str] | None:
    plain = _hex(piece)
    return ("hex", plain) if plain else None


def _url_pieces(text: str) -> Iterator[str]:
    """The whitespace-separated pieces of ``text`` holding three or more ``%XX`` escapes."""
    end = 0
    for count, match in enumerate(_PERCENT.finditer(text)):
        if count > 8 * MAX_PIECES:
            break
        if match.start() < end:
            continue
        start = max(text.rfind(c, 0, match.start()) for c in " \n\t") + 1
        found = _SPACE.search(text, match.end())
        end = found.start() if found else len(text)
        piece = text[start:end]
        if piece.count("%") >= 3:
            yield piece


def decoded(text: str, folded: str, vocabulary: set[str]) -> Iterator[tuple[str, str]]:
    """``(kind, decoded text)`` for the encoded pieces of ``text`` (``folded``: its folded
    form; ``vocabulary``: its folded words) that decode to readable text."""
    budget = MAX_DECODED
    finders: list[tuple[str, re.Pattern[str], Callable[[str], tuple[str, str] | None]]] = []
    if any(len(word) >= LONG_WORD and "_" not in word and (len(word) >= 24 or not word.isalpha())
           for word in vocabulary):
        finders.append(("base64", _BASE64, _base64_or_hex))  # a hex run is base64 letters too
    if "\\x" in text:
        finders.append(("hex", _HEX_ESCAPES, _hex_of))
    if len(_DUMP_PAIRS & vocabulary) >= 6:
        finders.append(("hex", _HEX_SPACED, _hex_of))
    for _, pattern, decode in finders:
        for count, match in enumerate(pattern.finditer(text)):
            if count >= MAX_PIECES or budget <= 0:
                break
            found = decode(match.group(0))
            if found:
                budget -= len(found[1])
                yield found
    if "%" in text:
        for count, piece in enumerate(_url_pieces(text)):
            if count >= MAX_PIECES or budget <= 0:
                break
            plain = unquote_plus(piece)
            budget -= len(plain)
            yield "url", plain
    if not ROT13_WORDS.isdisjoint(vocabulary) and budget > 0:
        yield "rot13", folded.translate(_ROT13)[:budget]

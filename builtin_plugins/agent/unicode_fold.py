"""Unicode handling for the injection scan.

Two jobs:

* :func:`invisible_characters`: the characters in a text that render as nothing (or reorder
  it) and are out of place. Invisible means Unicode category **Cf** (format: zero-width
  spaces and joiners, bidirectional controls, word joiners, tags, the Arabic letter mark, ...)
  plus :data:`NAMED_INVISIBLE` (blank characters of other categories: Hangul fillers, the
  combining grapheme joiner, Khmer inherent vowels, Mongolian and other variation selectors,
  the blank Braille pattern). A few are ordinary in real text and are allowed **in place**:
  one emoji variation selector (U+FE0E/U+FE0F) after an emoji or a keycap digit, one
  ideographic variation selector after a CJK ideograph or math symbol, a zero-width joiner
  inside an emoji sequence or between letters of scripts that use joiners (Arabic, Indic,
  ...), a zero-width non-joiner between such letters, tag characters in an emoji flag
  sequence (U+1F3F4 ... U+E007F). Anywhere else they are reported.
* :func:`fold` and :func:`respell`: the forms the rules are matched against. ``fold``:
  NFKD (full-width and styled letters become plain ones), drop marks and invisible
  characters, map Cyrillic/Greek/small-capital look-alikes to Latin letters, casefold.
  ``respell``: digits and symbols used as letters (``1gn0r3``) and spaced-out letters
  (``i g n o r e``) joined back into words.

Everything here is linear in the text: whole-text passes are ``str.split``, ``set``,
``str.replace``/``str.translate``, normalisation and regular expressions that start at a
single character or a literal. No pass makes a string object per character where the words
or a few ``str.replace`` calls can stand for them (see :func:`characters` and
:func:`strip_invisible`).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterator

#: Blank characters outside category Cf, reported like Cf ones.
NAMED_INVISIBLE: frozenset[int] = frozenset([
    0x034F,  # combining grapheme joiner
    0x115F, 0x1160, 0x3164, 0xFFA0,  # Hangul fillers
    0x17B4, 0x17B5,  # Khmer inherent vowels
    0x180B, 0x180C, 0x180D, 0x180F,  # Mongolian free variation selectors
    0x2800,  # Braille pattern blank
    *range(0xFE00, 0xFE10),  # variation selectors 1-16
    *range(0xE0100, 0xE01F0),  # variation selectors 17-256
])

_EMOJI = ("\u00a9\u00ae\u203c\u2049\u2122\u2139\u2194-\u21aa\u231a-\u23ff\u24c2\u25aa-\u27bf"
          "\u2934\u2935\u2b05-\u2b55\u3030\u303d\u3297\u3299\U0001f000-\U0001faff")
_JOINING = ("\u0620-\u06ff\u0750-\u077f\u08a0-\u08ff\u0900-\u0dff\u0f00-\u0fff\u1000-\u109f"
            "\ufb50-\ufdff\ufe70-\ufefc")  # Arabic and Indic scripts, Tibetan, Myanmar
_IDEOGRAPHIC = ("\u2e80-\u2fdf\u3005-\u3007\u3021-\u3029\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
                "\u2200-\u22ff\u2a00-\u2aff\U00020000-\U0003134f")
_TAG_LETTER = "\U000e0030-\U000e0039\U000e0061-\U000e007a"
_OTHER_VS = "\ufe00-\ufe0d\U000e0100-\U000e01ef"

#: Where a contextual character is ordinary text: (the characters, a class one of which must
#: come right before, a class one of which must come right after; "" for no condition).
_PLACES: tuple[tuple[str, str, str], ...] = (
    ("\ufe0e\ufe0f", f"#*0-9{_EMOJI}", ""),
    (_OTHER_VS, _IDEOGRAPHIC, ""),
    ("\u200d", f"{_EMOJI}\ufe0f{_JOINING}", f"{_EMOJI}{_JOINING}"),
    ("\u200c", _JOINING, _JOINING),
)
_FLAG = rf"\U0001f3f4[{_TAG_LETTER}]{{1,8}}+\U000e007f"  # tags in place: an emoji flag
#: Occurrences that are ordinary text; each branch starts at the character it allows.
_IN_PLACE = re.compile("|".join(
    [rf"[{chars}](?<=[{before}][{chars}])" + (rf"(?=[{after}])" if after else "")
     for chars, before, after in _PLACES] + [_FLAG]))
_FLAGS = re.compile(_FLAG)
_CONTEXTUAL = frozenset("\ufe0e\ufe0f\u200d\u200c" + "".join(
    chr(c) for c in (*range(0xFE00, 0xFE0E), *range(0xE0100, 0xE01F0),
                     *range(0xE0030, 0xE003A), *range(0xE0061, 0xE007B), 0xE007F)))


def is_invisible(char: str) -> bool:
    return unicodedata.category(char) == "Cf" or ord(char) in NAMED_INVISIBLE


@functools.lru_cache(maxsize=512)
def _out_of_place(char: str) -> re.Pattern[str] | None:
    """An occurrence of ``char`` (one character of :data:`_PLACES`) that is not ordinary text;
    None for tag characters, which are in place inside a flag."""
    for chars, before, after in _PLACES:
        if re.fullmatch(f"[{chars}]", char):
            escaped = re.escape(char)
            return re.compile(rf"{escaped}(?:(?<![{before}]{escaped})"
                              + (rf"|(?![{after}]))" if after else ")"))
    return None


def invisible_characters(text: str, distinct: set[str] | None = None) -> list[int]:
    """Code points of the out-of-place invisible characters in ``text``, sorted.
    ``distinct``: ``set(text)`` if the caller has it. A character that may be in place is
    kept if one search finds it out of place (tag characters: left once flags are taken out);
    the text is never split into characters."""
    if text.isascii():
        return []
    suspects = {c for c in (set(text) if distinct is None else distinct)
                if c >= "\x80" and is_invisible(c)}
    without_flags: str | None = None
    for char in sorted(suspects & _CONTEXTUAL):
        if (pattern := _out_of_place(char)) is not None:
            stays = pattern.search(text) is not None
        else:
            without_flags = _FLAGS.sub("", text) if without_flags is None else without_flags
            stays = char in without_flags
        if not stays:
            suspects.discard(char)
    return sorted(ord(c) for c in suspects)


# Cyrillic and Greek letter names (the part after "LETTER") -> (capital, small) Latin look-alike;
# "" where that case looks like nothing Latin.
_LOOKALIKE_NAMES: dict[str, tuple[str, str]] = {
    # Cyrillic
    "A": ("a", "a"), "BE": ("", "b"), "VE": ("b", ""), "IE": ("e", "e"), "KA": ("k", "k"),
    "EM": ("m", "m"), "EN": ("h", "h"), "O": ("o", "o"),
    "ER": ("p", "p"), "ES": ("c", "c"), "TE": ("t", "t"), "U": ("y", "y"), "HA": ("x", "x"),
    "DZE": ("s", "s"), "BYELORUSSIAN-UKRAINIAN I": ("i", "i"), "YI": ("i", "i"),
    "JE": ("j", "j"), "SHHA": ("h", "h"), "KOMI DE": ("", "d"), "QA": ("q", "q"),
    "WE": ("w", "w"), "PALOCHKA": ("i", "i"), "STRAIGHT U": ("y", "y"),
    # Greek
    "ALPHA": ("a", "a"), "BETA": ("b", ""), "EPSILON": ("e", ""), "ZETA": ("z", ""),
    "ETA": ("h", "n"), "IOTA": ("i", "i"), "KAPPA": ("k", "k"), "MU": ("m", "u"),
    "NU": ("n", "v"), "OMICRON": ("o", "o"), "RHO": ("p", "p"), "TAU": ("t", ""),
    "UPSILON": ("y", "u"), "CHI": ("x", "x"), "OMEGA": ("", "w"), "LUNATE SIGMA SYMBOL": ("c", "c"),
    "YOT": ("j", "j"), "DIGAMMA": ("f", ""),
}
_LETTER_NAME = re.compile(r"(CYRILLIC|GREEK) (CAPITAL|SMALL) LETTER (.+)")
_SMALL_CAPITAL = re.compile(r"LATIN LETTER SMALL CAPITAL ([A-Z])")
_LOOKALIKE_BLOCKS = (range(0x0250, 0x02B0), range(0x0370, 0x0530), range(0x1D00, 0x1D80))


@functools.cache
def lookalikes() -> dict[str, str]:
    """Look-alike letters -> the Latin letter they imitate, generated from Unicode names."""
    table: dict[str, str] = {}
    for block in _LOOKALIKE_BLOCKS:
        for cp in block:
            name = unicodedata.name(chr(cp), "")
            if small := _SMALL_CAPITAL.fullmatch(name):
                table[chr(cp)] = small.group(1).lower()
            elif (letter := _LETTER_NAME.fullmatch(name)) and letter.group(3) in _LOOKALIKE_NAMES:
                latin = _LOOKALIKE_NAMES[letter.group(3)][letter.group(2) == "SMALL"]
                if latin:
                    table[chr(cp)] = latin
    return table


def _dropped(char: str) -> bool:
    """Removed by :func:`fold`: marks and invisible characters."""
    return unicodedata.category(char) in ("Mn", "Me", "Cf") or ord(char) in NAMED_INVISIBLE


_NON_ASCII = re.compile(r"[^\x00-\x7f]")


def strip_invisible(text: str, kinds: int = 4) -> tuple[str, set[str]] | None:
    """For ASCII text with invisible characters (or marks) of at most ``kinds`` kinds that
    NFKD leaves alone: the text without them, which is what :func:`fold` gives before
    lower-casing, and the characters taken out. One ``str.replace`` per kind instead of
    looking at every character's set; None as soon as another character turns up."""
    found: set[str] = set()
    pos = 0
    while not text.isascii() and (match := _NON_ASCII.search(text, pos)) is not None:
        pos = match.start()
        near = {c for c in text[pos:pos + 256] if c >= "\x80"}  # a dense mix gives up at once
        if len(found | near) > kinds or not all(map(_strippable, near)):
            return None
        for char in near - found:
            text = text.replace(char, "")
        found |= near
    return text, found


def _strippable(char: str) -> bool:
    return _dropped(char) and unicodedata.is_normalized("NFKD", char)


def distinct_pieces(text: str, chunk: int = 16_384) -> set[str]:
    """``set(text.split())``, split ``chunk`` characters at a time (cut at a space): each
    chunk's pieces are counted while they are still in the processor's cache, which on a
    megabyte of words takes about two thirds of the time of one split."""
    if len(text) <= 2 * chunk:
        return set(text.split())
    found: set[str] = set()
    start = 0
    while start < len(text):
        cut = text.find(" ", start + chunk)
        cut = len(text) if cut == -1 else cut
        found.update(text[start:cut].split())
        start = cut
    return found


def characters(text: str, window: int = 256, searches: int = 16, kinds: int = 256) -> set[str]:
    """``set(text)`` without a string object per character: a search for the first character
    not yet found (a class of the found ones, negated) resumes where the last one stopped,
    so the text is scanned once at C speed, and the characters of a ``window`` after each
    find are added at once. After ``searches`` finds, or past ``kinds`` characters (whose
    class would be slow to compile), the occurrences of the characters not yet found are
    collected in one pass (few, when the common ones are found)."""
    found: set[str] = set()
    pos = 0
    for _ in range(searches):
        if len(found) > kinds:
            break
        match = _not_in(found).search(text, pos)
        if match is None:
            return found
        pos = match.start()
        found.update(text[pos:pos + window])
    return found.union(_not_in(found).findall(text, pos))


def _not_in(chars: set[str]) -> re.Pattern[str]:
    if not chars:
        return re.compile(r"[\s\S]")
    return re.compile("[^" + "".join(map(re.escape, sorted(chars))) + "]")


def fold(text: str, distinct: set[str] | None = None) -> str:
    """``text`` as the rules see it: compatibility-decomposed, without marks and invisible
    characters, look-alikes mapped to Latin, casefolded. ``distinct``: the distinct
    characters of ``text`` if the caller has them, white space optional (each whole-text
    step runs only when some character needs it)."""
    if text.isascii():
        return text.lower()
    chars = "".join(set(text) if distinct is None else distinct)
    if not (unicodedata.is_normalized("NFKD", chars) and unicodedata.is_normalized("NFKD", text)):
        text = unicodedata.normalize("NFKD", text)
        chars = "".join(set(unicodedata.normalize("NFKD", chars)))
    drop = sorted(c for c in chars if c >= "\x80" and _dropped(c))
    if len(drop) <= 8:  # str.replace is a fast C loop; a few passes beat a regex per match
        for char in drop:
            text = text.replace(char, "")
    else:
        text = re.sub("[" + "".join(map(re.escape, drop)) + "]+", "", text)
    table = lookalikes()
    swap = {c: table[c] for c in chars if c in table}
    if len(swap) <= 32:  # as above: a few fast passes beat a dictionary lookup per character
        for char, latin in swap.items():
            text = text.replace(char, latin)
    else:
        text = text.translate({ord(c): latin for c, latin in swap.items()})
    return text.casefold()


_LEET_PAIRS = tuple(zip("0134578@$", "oieastbas"))
_LEET = str.maketrans(dict(_LEET_PAIRS))
#: A digit or symbol used as a letter: it touches a letter.
#: A digit or symbol used as a letter (it touches one).
LEET_IN_WORD = re.compile(r"[0-9@$](?:(?<=[a-z][0-9@$])|(?=[a-z]))")
# a separator after a single letter, then more single letters: "i g n o r e", "i-g-n-o-r-e"
# (the match starts at the first separator: fewer candidate positions than letters). The
# repeated group is atomic, not possessive: Python 3.11.2 ignores a failing lookaround in a
# possessive group repeat (tests/test_regex_portability.py).
_SPACED_RUN = re.compile(r"[ ._*~-](?<=[a-z0-9][ ._*~-])(?<![a-z0-9]{2}[ ._*~-])[ ._*~-]{0,2}+"
                         r"[a-z0-9](?![a-z0-9])(?>(?:[ ._*~-]{1,3}+[a-z0-9](?![a-z0-9])){2,})")
_WORD_BREAK = re.compile(r"[ ._*~-]{2,3}")
_SEPARATOR = re.compile(r"[ ._*~-]")
# The text as classes, one byte per character: "a" letter or digit, " " separator, "|" other.
_CLASSES = bytes.maketrans(
    bytes(range(256)),
    bytes(ord("a") if chr(b) in "abcdefghijklmnopqrstuvwxyz0123456789"
          else ord(" ") if chr(b) in " ._*~-" else ord("|") for b in range(256)))
# In a run of four or more one-character words, the second and third are each between
# separators: ``" a "`` then ``"a "`` after up to two more. Starting at a three-byte literal,
# the search skips ordinary text at C speed.
_RUN_HINT = re.compile(rb" a (?: {0,2}a )")


def spaced_runs(text: str) -> Iterator[re.Match[str]]:
    """The matches of the spaced-out run pattern in ``text``, as ``finditer`` gives them, but
    tried only next to a hint in the class bytes. A run's start (the separator after its first
    letter) is within two characters of its first hint, and no hint comes between the end of a
    run and the first hint of the next."""
    classes = text.encode("ascii", "replace").translate(_CLASSES)  # one byte per character
    pos = 0
    while (hint := _RUN_HINT.search(classes, pos)) is not None:
        at = hint.start()
        for start in range(max(pos, at - 2), at + 3):
            if (run := _SPACED_RUN.match(text, start)) is not None:
                yield run
                pos = run.end()
                break
        else:
            pos = at + 1


def respell(folded: str, spaced: bool = True, leet: bool = True) -> tuple[str, list[str]]:
    """A second spelling of folded text: leetspeak digits and symbols read as letters (where
    they touch a letter anywhere in the text) and spaced-out letters joined (two or more
    separators between words). Also returns each spaced-out run with every separator
    removed, for text spaced out letter by letter. ``spaced=False`` / ``leet=False``: the
    caller knows the text has no spaced-out run / no digit or symbol touching a letter."""
    text = folded
    if leet and LEET_IN_WORD.search(folded):
        if folded.isascii():
            text = folded.translate(_LEET)
        else:  # translate looks each character up in Python: a replace per digit is C
            for digit, letter in _LEET_PAIRS:
                text = text.replace(digit, letter)
    squashed: list[str] = []
    if not spaced:
        return text, squashed
    parts: list[str] = []
    done = 0
    for match in spaced_runs(text):
        start = match.start() - 1  # the run starts at the letter before the separator
        run = text[start:match.end()]
        squashed.append(_SEPARATOR.sub("", run))
        parts += [text[done:start], " ".join(_SEPARATOR.sub("", w) for w in _WORD_BREAK.split(run))]
        done = match.end()
    return ("".join(parts) + text[done:] if parts else text), squashed

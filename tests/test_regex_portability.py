"""Regular expressions that behave the same on every Python hermes supports (3.11 and later).

Python 3.11.2, the python3 of Debian 12, ignores a failing lookaround inside a possessive
repeat of a group: ``(?:a(?!b))*+`` matches all of "aab" there (later releases match "a").
The source writes such a repeat as an atomic group instead, ``(?>(?:a(?!b))*)``, which every
3.11 release matches alike.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ["kernel", "api", "hookspecs", "builtin_plugins", "plugins", "testing"]
# a group closed, then a possessive quantifier: )*+ )++ )?+ ){m,n}+
POSSESSIVE_GROUP = re.compile(r"\)(?:\*|\+|\?|\{\d*(?:,\d*)?\})\+")


def test_no_group_is_repeated_possessively() -> None:
    found = [f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
             for folder in SOURCES for path in sorted((ROOT / folder).rglob("*.py"))
             for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if POSSESSIVE_GROUP.search(line)]
    assert found == [], "write (?>(?:...)*) instead of (?:...)*+:\n" + "\n".join(found)


def test_the_atomic_spelling_honours_the_lookaround() -> None:
    assert re.match(r"(?>(?:a(?!b))*)", "aab").group() == "a"
    assert POSSESSIVE_GROUP.search(r"(?:a(?!b))*+") and POSSESSIVE_GROUP.search(r"(?:x){2,}+")
    assert not POSSESSIVE_GROUP.search(r"[a-z]++(?>(?:_\w)*)")

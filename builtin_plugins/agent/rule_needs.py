"""The words a rule's pattern cannot match without, read from the pattern itself.

The scan tries a rule only where its lead is among the text's words, but most rules need more
words after the lead ("you" then "are" then "now"): in a text without them, every occurrence
of the lead is a failed attempt. :func:`needs` reads the pattern with the standard library's
parser and returns groups of literal pieces of word characters such that every match contains
at least one piece of each group. A piece of word characters lies inside one of the text's
words, so a group none of whose pieces occurs in the words rules the pattern out.
"""

from __future__ import annotations

import functools
import re
import re._constants as sre  # the parser's opcodes (public as sre_constants before 3.11)
import re._parser as sre_parse

Need = frozenset[str]  # every match contains one of these

_WORD_CHAR = re.compile(r"\w")
_REPEATS = (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT)


@functools.lru_cache(maxsize=256)
def needs(pattern: str) -> tuple[Need, ...]:
    """Groups of pieces of which every match of ``pattern`` contains one each; none when the
    pattern cannot be read (another Python's parser, flags): nothing is ruled out then."""
    try:
        parsed = sre_parse.parse(pattern)
        if parsed.state.flags & (re.IGNORECASE | re.VERBOSE):
            return ()
        return tuple(_needs(list(parsed)))
    except Exception:  # noqa: BLE001 (a parser that changed shape: no shortcut)
        return ()


def _needs(items: list[tuple[object, object]]) -> list[Need]:
    """The needs of a sequence: each run of literal word characters (two or more), and the
    needs of what must match at least once (groups, repeats of one or more, alternatives of
    which every branch has a need)."""
    found: list[Need] = []
    run: list[str] = []

    def close_run() -> None:
        if len(run) >= 2:
            found.append(frozenset(["".join(run)]))
        run.clear()

    for op, av in items:
        if op is sre.LITERAL and _WORD_CHAR.match(chr(av)):  # type: ignore[arg-type]
            run.append(chr(av))  # type: ignore[arg-type]
            continue
        close_run()
        if op is sre.SUBPATTERN:  # (group, flags on, flags off, body); (?i:...) is not read
            if not av[1] & re.IGNORECASE:  # type: ignore[index]
                found += _needs(list(av[-1]))  # type: ignore[index]
        elif op is sre.ATOMIC_GROUP:
            found += _needs(list(av))  # type: ignore[call-overload]
        elif op in _REPEATS and av[0] >= 1:  # type: ignore[index]
            found += _needs(list(av[2]))  # type: ignore[index]
        elif op is sre.BRANCH:
            branches = [_needs(list(branch)) for branch in av[1]]  # type: ignore[index]
            if all(branches):  # one need of each branch (the narrowest), any of them
                found.append(frozenset().union(*(min(b, key=len) for b in branches)))
    close_run()
    return found


def possible(pattern: str, words_text: str, seen: dict[str, bool]) -> bool:
    """False when a need of ``pattern`` has no piece in ``words_text`` (the text's words
    joined by spaces). ``seen`` remembers pieces already looked up."""
    for need in needs(pattern):
        for piece in need:
            if piece not in seen:
                seen[piece] = piece in words_text
            if seen[piece]:
                break
        else:
            return False
    return True

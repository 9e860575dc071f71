"""Command names that are globs (``/bin/r? -rf ~``): bash replaces the pattern by the files it
matches before running anything, so what runs cannot be read from the text.

The analyser reports such a name as ``indirect_command`` and also judges what it may stand
for: the files the pattern matches now, the known commands whose name it matches, and the rest
of the words (under ``nullglob`` a pattern matching nothing vanishes and the next word runs)."""

from __future__ import annotations

import fnmatch
import glob
import os
import re

from .inline import CODE_OPTIONS
from .rules_files import FILE_RULES
from .rules_secrets import SECRET_PRINTERS
from .rules_system import SHELLS, SYSTEM_RULES

_PATTERN = re.compile(r"[*?]|\[[^\]]+\]")
#: names judged when a pattern may match them
KNOWN = frozenset({*FILE_RULES, *SYSTEM_RULES, *SECRET_PRINTERS, *SHELLS, *CODE_OPTIONS,
                   "eval", "source",
                   "sudo", "env", "xargs", "mkfs"})
_LIMIT = 32


def is_pattern(name: str) -> bool:
    """Whether bash would expand the command name ``name`` as a glob."""
    return name not in ("[", "[[") and _PATTERN.search(name) is not None


def stand_ins(argv: list[str], cwd: str | None) -> list[list[str]]:
    """The commands a glob command name ``argv[0]`` may turn into."""
    pattern = argv[0]
    rest = argv[1:_LIMIT * 2]  # the stand-ins see the first words (the name is asked anyway)
    base = pattern.rstrip("/").rsplit("/", 1)[-1]
    names = sorted(n for n in KNOWN if fnmatch.fnmatchcase(n, base))
    out = [[n, *rest] for n in names[:_LIMIT]]
    out += [[m, *rest] for m in _matches(pattern, cwd) if not is_pattern(m)]
    k = next((k for k, word in enumerate(argv[1:]) if not is_pattern(word)), len(argv) - 1)
    if argv[k + 1:]:
        out.append(argv[k + 1:])  # nullglob: patterns matching nothing vanish
    return out


def _matches(pattern: str, cwd: str | None) -> list[str]:
    """Files matching ``pattern`` now (at most a few; relative to ``cwd``)."""
    pattern = os.path.expanduser(pattern)
    if not pattern.startswith("/") and cwd is None or sum(
            is_pattern(piece) for piece in pattern.split("/")) > 2:
        return []  # deep patterns are not walked: the name is asked about anyway
    found: list[str] = []
    try:
        for path in glob.iglob(pattern, root_dir=None if pattern.startswith("/") else cwd):
            found.append(path)
            if len(found) >= _LIMIT:
                break
    except (OSError, ValueError):
        return []
    return sorted(found)

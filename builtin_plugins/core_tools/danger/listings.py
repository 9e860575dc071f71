"""Files a command lists: ``find`` (and ``ls`` of a glob) print names a reader may be
handed next (``find ~/.ssh -exec cat {} +``, ``find ~ -name id_rsa | xargs cat``,
``cat $(find ~/.ssh -type f)``, ``for f in $(find ...)``). Each is stood in for by a path or
glob that the path rules can judge (``~/.ssh/*``, ``~/*/id_rsa``)."""

from __future__ import annotations

import re
from collections.abc import Callable

from .paths import SECRET_DIR, SECRET_FILE

_FIND_EXPR = re.compile(r"^[-(!)]")
#: tests matching a file's name, and its whole path (``-i...``: ignoring case)
_NAME_TESTS = frozenset({"-name", "-iname"})
_PATH_TESTS = frozenset({"-path", "-ipath", "-wholename", "-iwholename"})
#: operators that let files the name tests leave out through
_WIDENING = frozenset({"!", "-not", "-o", "-or", ","})
_GLOB = re.compile(r"[*?\[]")
#: stand-ins per command, at most
_LIMIT = 16


def find_parts(args: list[str]) -> tuple[list[str], list[str]]:
    """(start folders, expression) of ``find ARGS``."""
    starts: list[str] = []
    i = 0
    while i < len(args) and args[i] in ("-H", "-L", "-P", "-D"):
        i += 2 if args[i] == "-D" else 1  # -D DEBUGOPTS
    while i < len(args) and not _FIND_EXPR.match(args[i]):
        starts.append(args[i])
        i += 1
    return starts, args[i:]


def find_found(args: list[str]) -> list[str]:
    """What ``find ARGS`` prints, as paths and globs: ``START/NAME`` and ``START/*/NAME`` for
    each ``-name`` test, the ``-path`` patterns, and ``START/*`` (everything below) when there
    is no name test or an operator (``!``, ``-o``) lets other files through."""
    starts, expr = find_parts(args)
    names: list[str] = []
    for k, a in enumerate(expr[:-1]):
        value = expr[k + 1]
        if a in _NAME_TESTS:
            names.append(value.casefold() if a == "-iname" else value)
        elif a in _PATH_TESTS:
            names.append("\x01" + (value.casefold() if a.startswith("-i") else value))
    everything = not names or any(a in _WIDENING for a in expr)
    found: list[str] = []
    for start in starts or ["."]:
        base = start if start.endswith("/") else start + "/"
        if everything:
            found.append(base + "*")
        for name in names:
            if name.startswith("\x01"):
                found.append(name[1:])
            else:
                found += [base + name, base + "*/" + name]
    return list(dict.fromkeys(found))[:_LIMIT]


def listed(argv: list[str]) -> list[str]:
    """The paths (and globs) ``argv`` prints one per line or word, as far as known; [] for
    other commands. ``ls DIR`` prints bare names (relative to DIR, not to where they are read),
    so only its globs count."""
    if not argv:
        return []
    name = argv[0].rstrip("/").rsplit("/", 1)[-1]
    if name == "find":
        return find_found(argv[1:])
    if name == "ls":
        return [a for a in argv[1:] if not a.startswith("-") and _GLOB.search(a)][:_LIMIT]
    return []


def secret_listed(paths: list[str], labels: Callable[[str], frozenset[str]]) -> list[str]:
    """Those of ``paths`` (stand-ins for listed files) that are, or may be, secret files: a
    secret file, or a glob below a folder holding secrets (``~/.ssh/*``)."""
    out: list[str] = []
    for path in paths:
        found = labels(path)
        if SECRET_FILE in found or SECRET_DIR in found and _GLOB.search(path):
            out.append(path)
    return out

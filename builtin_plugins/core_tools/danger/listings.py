"""Files a command lists: ``find``, ``fd``, ``locate`` (and ``ls`` of a glob) print names a
reader may be handed next (``find ~/.ssh -exec cat {} +``, ``fd id_rsa ~ -x cat``,
``locate id_rsa | xargs cat``, ``cat $(find ~/.ssh -type f)``, ``for f in $(find ...)``).
Each is stood in for by a path or glob that the path rules can judge (``~/.ssh/*``,
``~/*/id_rsa``, ``/*id_rsa*``)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

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


#: a regex simple enough to be read as a glob: literal characters, ``\.``, ``.`` and ``.*``
_PLAIN_REGEX = re.compile(r"\^?(?:[\w\-@%+=:,~/ ]|\\\.|\.\*?)*\$?")
_REGEX_PIECE = re.compile(r"\\\.|\.\*|\.")


def _regex_glob(pattern: str) -> str | None:
    """A glob matching what the unanchored regex ``pattern`` finds in a name (``id_rsa`` ->
    ``*id_rsa*``, ``^id_`` -> ``id_*``, ``\\.pem$`` -> ``*.pem``); None when it cannot be told
    (alternations, classes, groups: any name)."""
    if not _PLAIN_REGEX.fullmatch(pattern):
        return None
    core = _REGEX_PIECE.sub(lambda m: {"\\.": ".", ".*": "*", ".": "?"}[m.group()],
                            pattern.removeprefix("^").removesuffix("$"))
    core = ("" if pattern.startswith("^") else "*") + core + (
        "" if pattern.endswith("$") else "*")
    return None if core.strip("*") == "" else core


#: fd's options whose value is the next word (or follows ``=``); its -x/-X take a command
_FD_VALUED = frozenset({
    "-e", "--extension", "-t", "--type", "-E", "--exclude", "-d", "--max-depth", "--min-depth",
    "--exact-depth", "-S", "--size", "--changed-within", "--changed-before", "--newer",
    "--older", "-o", "--owner", "-j", "--threads", "-c", "--color", "--base-directory",
    "--search-path", "--path-separator", "--max-results", "--format", "--ignore-file", "--and",
    "--batch-size", "--max-buffer-time"})
_FD_EXEC = frozenset({"-x", "--exec", "-X", "--exec-batch"})


@dataclass
class FdCall:
    """An ``fd`` command line: what it searches for, where, and the commands it runs."""
    positional: list[str] = field(default_factory=list)  # the pattern, then the folders
    options: dict[str, list[str]] = field(default_factory=dict)  # option -> its values
    commands: list[list[str]] = field(default_factory=list)  # -x/-X CMD ... [;]

    def has(self, *names: str) -> bool:
        return any(n in self.options for n in names)


def fd_parts(args: list[str]) -> FdCall:
    call = FdCall()
    k = 0
    while k < len(args):
        a = args[k]
        if a in _FD_EXEC:  # the command runs to a ";" word or the end
            end = args.index(";", k + 1) if ";" in args[k + 1:] else len(args)
            call.commands.append(args[k + 1:end])
            k = end + 1
            continue
        if a == "--":
            call.positional += args[k + 1:]
            break
        if a.startswith("--"):
            option, eq, value = a.partition("=")
            if not eq and option in _FD_VALUED and k + 1 < len(args):
                value, k = args[k + 1], k + 1
            call.options.setdefault(option, []).append(value)
        elif a.startswith("-") and len(a) > 1:
            for j, letter in enumerate(a[1:], 2):  # -HIe pem, -epem
                option, value = "-" + letter, ""
                if option in _FD_VALUED:
                    value = a[j:]
                    if not value and k + 1 < len(args):
                        value, k = args[k + 1], k + 1
                call.options.setdefault(option, []).append(value)
                if option in _FD_VALUED:
                    break
        else:
            call.positional.append(a)
        k += 1
    return call


def fd_found(call: FdCall) -> list[str]:
    """What ``fd`` prints, as globs below each folder it searches: the names its pattern may
    match (a regex found anywhere in the name, ``-g`` a glob of the whole name, ``-F`` a
    literal) with each ``-e`` extension, or everything below the folder. Hidden and ignored
    files it skips by default are counted too (``-H`` and ``-u`` are a keystroke away)."""
    pattern = call.positional[0] if call.positional else ""
    starts = call.options.get("--search-path") or call.positional[1:] or ["."]
    base_dir = (call.options.get("--base-directory") or [""])[-1]
    if call.has("-p", "--full-path") or pattern in ("", ".", "^", ".*"):
        name: str | None = None  # matched against the whole path: any name
    elif call.has("-g", "--glob"):
        name = pattern
    elif call.has("-F", "--fixed-strings"):
        name = "*" + pattern + "*"
    else:
        name = _regex_glob(pattern)
    if name is not None and call.has("-i", "--ignore-case"):
        name = name.casefold()
    extensions = ["." + e.lstrip(".") for e in call.options.get("-e", []) + call.options.get(
        "--extension", [])]
    found: list[str] = []
    for start in starts:
        if base_dir and not start.startswith(("/", "~")):
            start = base_dir.rstrip("/") + "/" + start
        base = start if start.endswith("/") else start + "/"
        for ext in extensions or [""]:
            if name is None:
                found.append(base + "*" + ext)
            else:  # a name anchored at its end already says how it ends
                glob = name + ext if name.endswith("*") else name
                found += [base + glob, base + "*/" + glob]
    return list(dict.fromkeys(found))[:_LIMIT]


#: locate's options whose value is the next word
_LOCATE_VALUED = frozenset({"-d", "--database", "-l", "-n", "--limit"})
_LOCATORS = frozenset({"locate", "plocate", "mlocate", "slocate"})


def locate_found(args: list[str]) -> list[str]:
    """What ``locate PATTERN...`` prints, as absolute globs: a pattern without glob
    characters is found anywhere in the path (``/*id_rsa*``), one with them matches the whole
    path; ``-b`` matches the file's name, ``-r``/``--regex`` a regex (any path when it cannot
    be read as a glob); ``-i`` ignores case."""
    options: set[str] = set()
    patterns: list[str] = []
    k = 0
    while k < len(args):
        a = args[k]
        if a == "--":
            patterns += args[k + 1:]
            break
        if a.startswith("-") and len(a) > 1:
            letters = [a] if a.startswith("--") else ["-" + c for c in a[1:]]
            options.update(letters)
            k += 1 if letters[-1] in _LOCATE_VALUED else 0
        else:
            patterns.append(a)
        k += 1
    regex = bool(options & {"-r", "--regexp", "--regex"})
    below = "/*/" if options & {"-b", "--basename"} else "/"
    found: list[str] = []
    for pattern in patterns:
        if regex:
            glob = _regex_glob(pattern)
            found.append("/*" if glob is None else below + glob.lstrip("/"))
        elif _GLOB.search(pattern):
            found.append(pattern if pattern.startswith("/") else below + pattern)
        else:
            found.append(below + "*" + pattern + "*")
    if options & {"-i", "--ignore-case"}:
        found = [f.casefold() for f in found]
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
    if name in ("fd", "fdfind"):
        return fd_found(fd_parts(argv[1:]))
    if name in _LOCATORS:
        return locate_found(argv[1:])
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

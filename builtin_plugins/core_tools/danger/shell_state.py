"""Builtins that change what the analyser knows (aliases, the working directory, variables),
and text that bash evaluates as arithmetic or as a variable name."""

from __future__ import annotations

import re
from collections.abc import Callable

from .paths import normalise
from .scope import MAX_VALUE, Scope
from .site import MARKERS, OPAQUE


def _alias(scope: Scope, argv: list[str]) -> None:
    for a in argv[1:]:
        if "=" in a:
            alias, value = a.split("=", 1)
            scope.aliases[alias] = value


def _cd(scope: Scope, argv: list[str]) -> None:
    targets = [a for a in argv[1:] if not a.startswith(("-", "+"))]
    if argv[0].endswith("popd") or argv[1:2] == ["-"]:
        scope.cwd = None  # back to a directory this text does not show
        return
    moved = normalise(targets[0] if targets else "~", scope.cwd)
    parts = moved.split("/")
    unknown = [part for part in parts if any(m in part for m in MARKERS)]
    if moved.startswith("/proc/") and unknown:
        # cd /proc/$PPID: a process's folder whatever the pid (its environ is an environment);
        # below it, a part that is all unknown may be empty (cd /proc/$PPID/$UNSET), but for
        # a thread's id (task/$TID)
        scope.cwd = "/".join(OPAQUE if part in unknown else part for n, part in enumerate(parts)
                             if n < 3 or part.strip(MARKERS) or parts[n - 1] == "task")
        return
    scope.cwd = moved if moved.startswith("/") and not unknown else None


def _declare(scope: Scope, argv: list[str]) -> None:
    for a in argv[1:]:
        if "=" in a and a.split("=", 1)[0].isidentifier():
            name, value = a.split("=", 1)
            scope.env[name] = value if len(value) <= MAX_VALUE else OPAQUE


def _read(scope: Scope, argv: list[str]) -> None:
    for a in argv[1:]:
        if a.isidentifier():
            scope.env[a] = OPAQUE


def _unset(scope: Scope, argv: list[str]) -> None:
    for a in argv[1:]:
        scope.env.pop(a, None)


SCOPE_BUILTINS: dict[str, Callable[[Scope, list[str]], None]] = {
    "alias": _alias, "cd": _cd, "pushd": _cd, "popd": _cd,
    **{name: _declare for name in ("export", "declare", "local", "readonly", "typeset")},
    **{name: _read for name in ("read", "mapfile", "readarray")}, "unset": _unset}

#: a subscript holding a command substitution (``a[$(cmd)]``), or an array assignment
#: re-read by ``declare`` (``declare -a "x=($(cmd))"``)
_EVALUATED = re.compile(r"\[[^\]]*(?:\$\(|`)|^[A-Za-z_]\w*\+?=\(.*(?:\$\(|`)", re.S)


def evaluated_code(text: str) -> bool:
    """Whether bash runs the substitutions in ``text`` when it evaluates it as arithmetic or as
    a variable name: a variable holding ``a[$(cmd)]`` runs ``cmd`` in ``$((x))``, ``[[ x -eq
    1 ]]``, ``${a[x]}``, ``let x``, ...; so does the name given to ``printf -v``, ``read``,
    ``test -v``."""
    return _EVALUATED.search(text) is not None


#: variables whose value is a command line that the programs reading them run
_CODE_VARIABLES = frozenset({
    "PAGER", "GIT_PAGER", "MANPAGER", "SYSTEMD_PAGER", "BAT_PAGER", "EDITOR", "VISUAL",
    "GIT_EDITOR", "GIT_SEQUENCE_EDITOR", "SUDO_EDITOR", "GIT_SSH_COMMAND", "GIT_SSH",
    "GIT_ASKPASS", "SSH_ASKPASS", "SUDO_ASKPASS", "GIT_EXTERNAL_DIFF", "GIT_PROXY_COMMAND",
    "PROMPT_COMMAND", "LESSOPEN", "LESSCLOSE", "RSYNC_RSH", "CVS_RSH", "BROWSER",
    "FZF_DEFAULT_COMMAND"})
#: variables naming a script a shell sources at start
_FILE_VARIABLES = frozenset({"BASH_ENV", "ENV"})
#: variables naming code loaded into every program started (what it does cannot be read)
_LIBRARY_VARIABLES = frozenset({"LD_PRELOAD", "LD_AUDIT", "DYLD_INSERT_LIBRARIES"})


def variable_code(name: str, value: str) -> tuple[str, str] | None:
    """What assigning ``value`` to ``name`` makes later programs run: ("code", command line),
    ("file", script) or ("unknown", ""); None for an ordinary variable. ``BASH_FUNC_f%%``
    is an exported function's body."""
    if name in _CODE_VARIABLES:
        return "code", value
    if name.startswith("BASH_FUNC_"):
        return "code", value.lstrip("() \t")
    if name in _FILE_VARIABLES:
        return "file", value
    if name in _LIBRARY_VARIABLES and value:
        return "unknown", ""
    return None

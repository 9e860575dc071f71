"""Git commands that discard history or uncommitted work (``git_destroy``).

Inside the workspace the sandbox lets git do anything; these are the commands after which
work is gone for good (or only in the reflog until ``gc``), so the analyser asks first:
``reset --hard``, ``checkout``/``restore`` of paths, ``switch -f``, ``clean -f``,
``stash drop|clear``, ``reflog expire|delete``, ``gc --prune=now``, ``prune``,
``update-ref -d``, ``branch -D``, forced pushes, ``rm -f``, ``worktree remove -f``,
``read-tree -u --reset``, ``checkout-index -f``, ``filter-branch``/``filter-repo``. Global
options (``-C DIR``, ``-c k=v``) are skipped and ``-c alias.NAME=...`` aliases resolved; git
accepts any unambiguous prefix of a long option (``--har``), so these are matched by prefix.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable

from .rules_files import short_flags, split_options
from .site import Site

GIT_VALUED = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path",
                        "--config-env"})
#: alias expansions followed at most (an alias may name another)
_ALIAS_DEPTH = 8


def long_option(options: list[str], name: str, shortest: int = 3) -> bool:
    """One of ``options`` is git's ``name`` (``--hard``) or a prefix of it git accepts."""
    return any(len(head) >= shortest and name.startswith(head)
               for head in (o.split("=", 1)[0] for o in options if o.startswith("--")))


def _split_alias(value: str) -> list[str]:
    try:
        return shlex.split(value)
    except ValueError:
        return value.split()


def subcommand(args: list[str]) -> tuple[str, list[str]] | None:
    """(sub-command, its arguments) after git's global options, ``-c alias.x=...`` aliases
    resolved; None when there is none."""
    aliases: dict[str, str] = {}
    i = 0
    while i < len(args) and args[i].startswith("-"):
        if args[i] == "-c" and i + 1 < len(args):
            key, eq, value = args[i + 1].partition("=")
            if eq and key.casefold().startswith("alias."):
                aliases[key[6:].casefold()] = value
        i += 2 if args[i] in GIT_VALUED else 1
    if i >= len(args):
        return None
    sub, rest = args[i], args[i + 1:]
    for _ in range(_ALIAS_DEPTH):
        value = aliases.pop(sub.casefold(), None)
        if value is None or value.startswith("!") or not value.strip():
            break  # ``!`` aliases are shell commands: option_code judges them
        words = _split_alias(value)
        sub, rest = words[0], [*words[1:], *rest]
    return sub, rest


def _reset(options: list[str], operands: list[str]) -> bool:
    return long_option(options, "--hard")


#: ``git checkout`` options whose value is the next word (``-b NEW``)
_CHECKOUT_VALUED = frozenset({"-b", "-B", "--orphan", "--conflict"})


def _names_a_path(word: str) -> bool:
    """``word`` cannot be a branch or commit: git reads it as a path (``.``, ``./x``,
    ``*.py``, ``:/``)."""
    return (word in (".", "..") or word.startswith(("./", "../", "/", ":"))
            or any(c in word for c in "*?["))


def _checkout(rest: list[str]) -> bool:
    """``checkout -- PATHS``, ``checkout REF PATHS``, ``checkout .``, ``--ours FILE``: the
    files' edits are overwritten; ``checkout -f BRANCH`` throws local changes away."""
    dashes = rest.index("--") if "--" in rest else len(rest)
    options, operands = split_options(rest[:dashes], _CHECKOUT_VALUED)
    paths = rest[dashes + 1:]
    flags = short_flags([o for o in options if o[:2] not in ("-b", "-B")])  # -bfix: a name
    if "f" in flags or long_option(options, "--force"):
        return True
    if paths or len(operands) >= 2 or long_option(options, "--pathspec-from-file"):
        return True
    if operands and (long_option(options, "--ours", 4) or long_option(options, "--theirs")):
        return True
    return any(_names_a_path(w) for w in operands)


def _restore(options: list[str], operands: list[str]) -> bool:
    """``restore`` writes the working tree unless only ``--staged`` is given."""
    worktree = staged = False
    for option in options:
        if option.startswith("--no-"):
            continue
        flags = short_flags([option])
        worktree = worktree or "W" in flags or long_option([option], "--worktree")
        staged = staged or "S" in flags or long_option([option], "--staged", 4)
    return (worktree or not staged) and (
        bool(operands) or long_option(options, "--pathspec-from-file"))


def _clean(options: list[str], forced: bool) -> bool:
    flags = short_flags(options)
    if "n" in flags or long_option(options, "--dry-run"):
        return False
    return forced or "f" in flags or long_option(options, "--force")


def _branch(options: list[str], operands: list[str]) -> bool:
    flags = short_flags(options)
    deletes = "d" in flags or long_option(options, "--delete")
    return "D" in flags or deletes and ("f" in flags or long_option(options, "--force"))


def _push(options: list[str], operands: list[str]) -> bool:
    """Forced, mirrored, deleting or pruning pushes, ``+ref`` and ``:ref``."""
    flags = short_flags(options)
    return ("f" in flags or "d" in flags or any(
        o.startswith(("--force", "--mirror", "--delete", "--prune")) for o in options)
        or long_option(options, "--force", 4) or long_option(options, "--mirror", 4)
        or long_option(options, "--delete", 4) or long_option(options, "--prune", 5)
        or any(ref.startswith(("+", ":")) for ref in operands[1:]))


def _reflog(options: list[str], operands: list[str]) -> bool:
    """``reflog delete``, ``reflog expire --expire=now``: the safety net goes (the default
    expiry, 90 days, is what ``gc`` does anyway)."""
    if operands[:1] == ["delete"]:
        return True
    return operands[:1] == ["expire"] and any(
        o.split("=", 1)[0] in ("--expire", "--expire-unreachable")
        and o.partition("=")[2] not in ("never", "false") for o in options)


def _gc(options: list[str], settings: list[str]) -> bool:
    """``gc --prune=now``: unreachable commits go now, not in two weeks."""
    values = [o.partition("=")[2] for o in options if o.startswith("--prune=")]
    values += [s.partition("=")[2] for s in settings
               if s.partition("=")[0].casefold() == "gc.pruneexpire"]
    return any(v not in ("never", "") and not v.endswith("ago") for v in values)


def _stash(options: list[str], operands: list[str]) -> bool:
    return operands[:1] in (["drop"], ["clear"])


def _rm(options: list[str], operands: list[str]) -> bool:
    """``rm -f``: modified files go with their edits (``--cached`` keeps the files)."""
    return (("f" in short_flags(options) or long_option(options, "--force"))
            and not long_option(options, "--cached"))


def _worktree(options: list[str], operands: list[str]) -> bool:
    return operands[:1] == ["remove"] and (
        "f" in short_flags(options) or long_option(options, "--force"))


_SIMPLE: dict[str, Callable[[list[str], list[str]], bool]] = {
    "reset": _reset, "restore": _restore, "branch": _branch, "push": _push,
    "reflog": _reflog, "stash": _stash, "rm": _rm, "worktree": _worktree,
    "update-ref": lambda options, operands: "-d" in options,
    "prune": lambda options, operands: not (
        "n" in short_flags(options) or long_option(options, "--dry-run")),
    "switch": lambda options, operands: (
        "f" in short_flags(options) or long_option(options, "--force")
        or long_option(options, "--discard-changes")),
    # plumbing that overwrites the working tree: read-tree -u --reset, checkout-index -f
    "read-tree": lambda options, operands: "-u" in options and long_option(options, "--reset"),
    "checkout-index": lambda options, operands: (
        "f" in short_flags(options) or long_option(options, "--force")),
    "filter-branch": lambda options, operands: True,
    "filter-repo": lambda options, operands: True,
}


_RESTORE_VALUED = frozenset({"-s", "--source"})


def discards(args: list[str]) -> bool:
    """Whether ``git ARGS`` discards history or uncommitted work."""
    found = subcommand(args)
    if found is None:
        return False
    sub, rest = found
    settings = [args[k + 1] for k in range(len(args) - 1) if args[k] == "-c"]
    if sub == "checkout":
        return _checkout(rest)
    options, operands = split_options(rest, _RESTORE_VALUED if sub == "restore" else frozenset())
    if sub == "clean":
        return _clean(options, any(s.replace(" ", "").casefold() == "clean.requireforce=false"
                                   for s in settings))
    if sub == "gc":
        return _gc(options, settings)
    rule = _SIMPLE.get(sub)
    return rule is not None and rule(options, operands)


def git(site: Site, args: list[str]) -> None:
    if discards(args):
        site.add("git_destroy")
    found = subcommand(args)
    if found is None or found[0] != "config":
        return
    # git config alias.undo 'reset --hard': the alias discards work when it is run
    words = [a for a in found[1] if not a.startswith("-")]
    words = words[1:] if words[:1] == ["set"] else words
    if len(words) >= 2 and words[0].casefold().startswith("alias.") and not (
            words[1].startswith("!")) and discards(_split_alias(words[1])):
        site.add("git_destroy")

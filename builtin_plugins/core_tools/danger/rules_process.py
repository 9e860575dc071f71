"""Commands that read another process's environment or memory: ``ps`` showing environments,
debuggers and tracers attaching to a running process. hermes keeps its API keys in its own
environment and memory, and the commands it runs are its children (``$PPID`` is hermes)."""

from __future__ import annotations

import re

from .site import MARKERS, Site

#: procps ``ps``: UNIX options (``-o FORMAT``) and long options whose value is the next word
_PS_UNIX_VALUED = frozenset("CGgOopqstUuk")
_PS_LONG_VALUED = frozenset({
    "--format", "--sort", "--pid", "--ppid", "--quick-pid", "--cols", "--columns", "--rows",
    "--lines", "--width", "--group", "--Group", "--user", "--User", "--tty", "--sid"})
#: BSD option words (no dash) whose last letter takes the next word (``ps axo pid,user``)
_PS_BSD_VALUED = frozenset("oOpqtUk")


def ps_shows_environment(args: list[str]) -> bool:
    """Whether ``ps`` prints processes' environments: a BSD option word holding ``e``
    (``ps e``, ``ps eww PID``, ``ps auxe``), or ``-E`` (macOS). ``-e`` (UNIX style: every
    process) does not; neither do the values of ``-o``, ``--sort``, ``axo`` and the like."""
    skip = False
    for a in args:
        if skip:
            skip = False
            continue
        if a.startswith("--"):
            skip = "=" not in a and a in _PS_LONG_VALUED
            continue
        if a.startswith("-"):
            for j, letter in enumerate(a[1:], 2):
                if letter == "E":
                    return True
                if letter in _PS_UNIX_VALUED:  # its value: the rest of the word or the next
                    skip = j == len(a)
                    break
            continue
        if not a.isalpha():  # a pid or a list of them, or text the analyser cannot know
            continue
        for j, letter in enumerate(a, 1):
            if letter == "e":
                return True
            if letter in _PS_BSD_VALUED:
                skip = j == len(a)
                break
    return False


def ps(site: Site, args: list[str]) -> None:
    """``ps e``: every process's environment (hermes's API keys among them) in the output."""
    if ps_shows_environment(args):
        site.add("credential_read")


_GDB_VALUED = frozenset({"-x", "-ex", "-iex", "-ix", "-cd", "-d", "-s", "-e", "-se", "-c",
                         "-core", "-p", "-pid", "-b", "-l", "-tty", "-t", "-D", "-data-directory",
                         "-command", "-eval-command", "-init-command", "-init-eval-command",
                         "-directory", "-symbols", "-exec", "-baud"})
_GDB_PID = frozenset({"-p", "-pid"})
_GDB_CORE = frozenset({"-c", "-core"})
#: a debugger command that attaches to a running process (``-ex 'attach 42'``, lldb's
#: ``process attach``); also the word ``attach`` given as gdb's program (``gdb attach 42``)
_ATTACH = re.compile(r"(?:^|[\s;])(?:process\s+)?attach\b")
_LLDB_ATTACH = frozenset({"-p", "--attach-pid", "-n", "--attach-name", "-w", "--wait-for"})


def _pid_like(word: str) -> bool:
    return word.isdigit() or any(m in word for m in MARKERS)


def _gdb(args: list[str]) -> bool:
    """``gdb -p PID``, ``--pid=PID``, ``-c PID``, ``-ex 'attach PID'``, ``gdb PROG PID``."""
    operands: list[str] = []
    k = 0
    while k < len(args):
        a = args[k]
        if a in ("--args", "-args"):
            break  # the rest is the program's own command line
        if a.startswith("-") and len(a) > 1:
            option, eq, value = a.lstrip("-").partition("=")
            option = "-" + option
            if not eq and option in _GDB_VALUED:
                value = args[k + 1] if k + 1 < len(args) else ""
                k += 1
            if option in _GDB_PID or option in _GDB_CORE and _pid_like(value):
                return True
            if _ATTACH.search(value):
                return True
        else:
            operands.append(a)
        k += 1
    # gdb PROGRAM PID, gdb attach PID
    return bool(operands) and (operands[0] == "attach" or len(operands) > 1
                               and _pid_like(operands[1]))


_TRACE_VALUED = frozenset({"-e", "-o", "-s", "-u", "-E", "-a", "-b", "-I", "-O", "-S", "-P",
                           "-X", "-n", "-l", "-A", "-F"})


def _traces_pid(args: list[str]) -> bool:
    """``strace -p PID``, ``--attach=PID``, ``-fp PID``, among the options before the command."""
    k = 0
    while k < len(args) and args[k].startswith("-") and args[k] != "--":
        a = args[k]
        if a.startswith("--"):
            if a == "--attach" or a.startswith("--attach="):
                return True
        elif "p" in a[1:] and not any(c in _TRACE_VALUED_LETTERS for c in a[1:a.index("p")]):
            return True
        elif a in _TRACE_VALUED:
            k += 1
        k += 1
    return False


_TRACE_VALUED_LETTERS = frozenset(o[1] for o in _TRACE_VALUED)


def attaches(name: str, args: list[str]) -> bool:
    """Whether ``name args`` attaches a debugger or tracer to a running process, or dumps its
    memory: it can read every secret the process holds (and change what it does)."""
    if name in ("gdb", "gdb-multiarch", "cgdb"):
        return _gdb(args)
    own = args[:args.index("--")] if "--" in args else args  # after --: the program it starts
    if name == "lldb":
        return any(a in _LLDB_ATTACH or a.startswith(("--attach-pid=", "--attach-name="))
                   or _ATTACH.search(a) for a in own)
    if name in ("strace", "ltrace"):  # the command after the options is the tool's own child
        return _traces_pid(args)
    if name in ("gcore", "pyrasite", "pyrasite-shell"):
        return any(not a.startswith("-") for a in args)
    if name == "py-spy":
        return any(a in ("-p", "--pid") or a.startswith("--pid=") for a in own)
    if name == "memray":
        return args[:1] == ["attach"]
    return False

"""What a command writes to its stdout, as far as code fed from it is concerned: readable text
(``echo``, ``printf``, heredocs passed through ``cat``), or a marker for output that cannot be
read (downloaded, decoded, from the network, from an unknown program)."""

from __future__ import annotations

import re
from collections.abc import Callable

from .parse import Command
from .rules_system import NETCATS
from .scope import DECODERS, DOWNLOADERS, SELECTORS, SETUP_GENERATORS, SETUP_WORDS, Content
from .site import DECODED, FETCHED, HERMES_PID, MARKERS, OPAQUE, REMOTE, base_name

#: set-up generators that print their code without a sub-command
_ALWAYS_SETUP = frozenset({"ssh-agent", "dircolors", "keychain"})


def output_of(cmd: Command, upstream: Callable[[], Content]) -> Content:
    """(marker, text) of ``cmd``'s output; ``upstream()`` gives what it reads on stdin.
    ("", None) means "a file's contents": not judged, like running the file."""
    argv = cmd.argv
    if not argv:
        return (OPAQUE, None) if argv is None or cmd.words_text else ("", "")
    name = base_name(argv[0])
    args = argv[1:]
    if name in DOWNLOADERS:
        return FETCHED, None
    if name in SETUP_GENERATORS and (name in _ALWAYS_SETUP or SETUP_WORDS & set(args)):
        return "", ""  # its own set-up code: trusted like running the program
    if name in NETCATS or name in ("telnet", "socat") or name == "openssl" and (
            "s_client" in args):
        return REMOTE, None
    if name == "echo":
        escapes = False
        while args and re.fullmatch(r"-[neE]+", args[0]):
            escapes = escapes or "e" in args[0]
            args = args[1:]
        if escapes and any("\\" in a for a in args):
            return DECODED, None
        return "", " ".join(args)
    if name == "printf":
        fmt = args[0] if args else ""
        if fmt in ("%s", "%s\n", "%s\\n"):
            return "", " ".join(args[1:])
        if "\\" in fmt or "%" in fmt:
            return DECODED, None
        return "", fmt
    if name in SELECTORS:
        marker, text = upstream()
        if marker or text is not None:
            return marker, text  # passes its input through
        return next((m for a in args for m in a if m in MARKERS), ""), None  # reads files
    if name in DECODERS:
        return DECODED, None
    if name == "ps" and any("ppid" in a.lower() for a in args):  # $(ps -o ppid= -p $$)
        return "", HERMES_PID
    if name in ("pgrep", "pidof") and any("hermes" in a.lower() for a in args):
        return "", HERMES_PID  # $(pgrep -f hermes), pidof hermes | xargs kill
    return OPAQUE, None

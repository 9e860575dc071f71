"""Lines typed while a turn runs.

The main thread waits for the turn anyway (see :mod:`.runner`); between the tools' questions
it also watches the terminal. The terminal is in its normal line mode then, so a line arrives
whole when Enter is pressed. What a line does:

- ``/steer TEXT``: guidance for the running turn, read by the model with the next tool result;
- ``/queue PROMPT`` (``/q``) or a plain line: sent as the next message after this turn;
- ``/background PROMPT``, ``/agents``, ``/stop``, ``/help``: run at once;
- any other command waits for the turn to end (it is queued, in order, with the messages).
"""

from __future__ import annotations

import os
import select
import sys
from collections.abc import Callable
from typing import TextIO

from .slash import ALIASES
from .terminal_input import terminal_fd

RUN_AT_ONCE = frozenset({"steer", "queue", "background", "agents", "stop", "help"})


class TurnInput:
    """Reads the terminal during a turn and hands each line to ``on_line``."""

    def __init__(self, on_line: Callable[[str], None], stdin: TextIO | None = None):
        self.on_line = on_line
        self.fd = terminal_fd(stdin or sys.stdin)
        self.ended = False  # Ctrl-D or a closed terminal: nothing more is read this turn

    def start_turn(self) -> None:
        self.ended = False

    def __call__(self, wait: float) -> None:
        if self.fd is None or self.ended:
            select.select([], [], [], wait)
            return
        ready, _, _ = select.select([self.fd], [], [], wait)
        if not ready:
            return
        try:
            data = os.read(self.fd, 4096)
        except OSError:
            data = b""
        if not data:
            self.ended = True
            return
        for line in data.decode("utf-8", "replace").splitlines():
            if line.strip():
                self.on_line(line)


def command_name(line: str) -> str | None:
    """The slash command a line names (aliases resolved), None for a plain message."""
    if not line.startswith("/"):
        return None
    name = line[1:].split(" ", 1)[0].lower()
    return ALIASES.get(name, name)

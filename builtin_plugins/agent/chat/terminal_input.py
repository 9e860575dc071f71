"""Reading one answer line from the terminal so that Ctrl-C interrupts it at any moment.

``input()`` with readline loaded prints the prompt and then blocks in ``select()`` on the
terminal; a SIGINT that lands between the two is recorded but wakes nothing, so the Ctrl-C is
lost until the user presses another key. Someone answering "Allow?" with Ctrl-C right as the
question appears would see the agent hang. Here the terminal and a signal wake-up pipe are
watched together: a signal received at any time, even before the wait starts, ends the wait,
and the signal's Python handler (``KeyboardInterrupt`` for SIGINT) runs at once.

The terminal stays in its normal line mode while reading, so the line is edited with the
terminal's own keys (backspace, Ctrl-U) and is not added to the chat's readline history.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import socket
import sys
import threading
from collections.abc import Iterator
from typing import TextIO


def read_line(prompt: str, *, stdin: TextIO | None = None, out: TextIO | None = None) -> str:
    """The next line typed after ``prompt``, without its line ending. Raises ``EOFError`` at
    end of input and ``KeyboardInterrupt`` on Ctrl-C. Falls back to ``input()`` when stdin is
    not a terminal, on Windows, or off the main thread (only it runs signal handlers)."""
    stdin = stdin or sys.stdin
    out = out or sys.stdout
    fd = terminal_fd(stdin)
    if (fd is None or sys.platform == "win32"
            or threading.current_thread() is not threading.main_thread()):
        return input(prompt)
    out.write(prompt)
    out.flush()
    data = b""
    with _signal_wakeup() as wakeup:
        while not data.endswith(b"\n"):
            ready, _, _ = select.select([fd, wakeup], [], [])
            if wakeup in ready:
                _drain(wakeup)  # the signal's handler runs on the next bytecode
                continue
            chunk = os.read(fd, 4096)
            if not chunk:  # Ctrl-D
                if not data:
                    raise EOFError
                break
            data += chunk
    return data.decode("utf-8", "replace").rstrip("\r\n")


def terminal_fd(stream: TextIO) -> int | None:
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
        return None
    return fd if os.isatty(fd) else None


_WAKEUP: tuple[socket.socket, socket.socket] | None = None  # (reader, writer), made once


@contextlib.contextmanager
def _signal_wakeup() -> Iterator[socket.socket]:
    """A socket that receives a byte whenever a signal with a Python handler arrives.

    The socket pair lives as long as the process. A Ctrl-C can raise between any two
    bytecodes, including before the old wake-up fd is put back; the wake-up fd then still
    names this open socket (never a closed descriptor whose number a file may reuse, which
    the next signal would write a byte into), and the next call takes over from it."""
    global _WAKEUP
    if _WAKEUP is None:
        pair = socket.socketpair()
        for sock in pair:
            sock.setblocking(False)
        _WAKEUP = pair[0], pair[1]
    reader, writer = _WAKEUP
    _drain(reader)  # bytes of earlier signals (their handlers have run)
    previous = signal.set_wakeup_fd(writer.fileno(), warn_on_full_buffer=False)
    if previous == writer.fileno():  # left installed by a call a Ctrl-C cut short
        previous = -1
    try:
        yield reader
    finally:
        signal.set_wakeup_fd(previous)


def _drain(sock: socket.socket) -> None:
    with contextlib.suppress(BlockingIOError, InterruptedError):
        while sock.recv(512):
            pass

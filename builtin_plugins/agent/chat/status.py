"""A one-line status on the terminal ("⠹ thinking… 3s") while the model or a tool works.

The turn's worker thread sets the label (through the renderer's events) and erases the line
before it writes anything; the main thread, which waits for the turn anyway, redraws it.
Used only when stderr is a terminal.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


class StatusLine:
    def __init__(self, err: TextIO):
        self.err = err
        self.label: str | None = None
        self.since = 0.0
        self.drawn = 0  # characters on the line now
        self._line = ""
        self._lock = threading.RLock()

    def show(self, label: str) -> None:
        """Show ``label`` from the next redraw on (the clock restarts when it changes)."""
        with self._lock:
            if label != self.label:
                self.label, self.since = label, time.monotonic()

    def hide(self) -> None:
        with self._lock:
            self.label = None
            self.erase()

    def erase(self) -> None:
        with self._lock:
            if self.drawn:  # blanks rather than an escape code: works on any terminal
                self.err.write("\r" + " " * self.drawn + "\r")
                self.err.flush()
                self.drawn = 0

    @contextmanager
    def paused(self) -> Iterator[None]:
        """Erase the line and keep it away while the caller writes to the terminal."""
        with self._lock:
            self.erase()
            yield

    def erase_soon(self, timeout: float = 0.5) -> None:
        """:meth:`erase` for the main thread: never waits long for the worker."""
        if self._lock.acquire(timeout=timeout):
            try:
                self.erase()
            finally:
                self._lock.release()

    def tick(self) -> None:
        """Redraw (called by the main thread while it waits). The main thread never blocks
        on the worker here: while the worker writes, this tick is skipped."""
        if not self._lock.acquire(blocking=False):
            return
        try:
            self._draw()
        finally:
            self._lock.release()

    def _draw(self) -> None:
        if self.label is None:
            return
        elapsed = time.monotonic() - self.since
        frame = FRAMES[int(elapsed * 10) % len(FRAMES)]
        clock = f" {elapsed:.0f}s" if elapsed >= 1 else ""
        line = f"{frame} {self.label}…{clock}"
        if self.drawn and line == self._line:
            return
        self._line = line
        self.err.write("\r" + line.ljust(self.drawn))
        self.err.flush()
        self.drawn = len(line)

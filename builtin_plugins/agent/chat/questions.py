"""Questions the agent asks the person at the terminal: approving a command, clarify.

Tools run on worker threads, but only the main thread reads the terminal. A tool's question is
queued, and the main thread, which waits for the turn anyway (see :mod:`.runner`), asks it. So
Ctrl-C at a question is an ordinary interrupt (the command is denied, the turn stops) and no
abandoned reader is left behind on another thread to swallow the next line the user types.
"""

from __future__ import annotations

import queue
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .terminal_input import read_line as terminal_read_line

OUTCOMES = {"once": "allowed once", "session": "allowed for this session",
            "always": "allowed always (saved to config.yaml)", "deny": "denied"}
ANSWERS = {"o": "once", "once": "once", "s": "session", "session": "session",
           "a": "always", "always": "always", "d": "deny", "deny": "deny"}


@dataclass
class Question:
    ask: Callable[[], str]  # runs on the main thread and reads the terminal
    default: str  # the answer when too late
    on_interrupt: str  # the answer when the user interrupts instead of answering
    deadline: float | None = None  # time.monotonic() after which nobody waits for it
    answer: str | None = None
    done: threading.Event = field(default_factory=threading.Event)

    def finish(self, answer: str) -> None:
        self.answer = answer
        self.done.set()

    @property
    def expired(self) -> bool:
        return self.deadline is not None and time.monotonic() > self.deadline


class TerminalQuestions:
    """The queue between tools asking and the main thread answering."""

    def __init__(self, err: Any = None, read_line: Callable[[str], str] | None = None):
        self.err = err or sys.stderr
        self.read_line = read_line or terminal_read_line  # shows a prompt, returns the line typed
        self._queue: queue.Queue[Question] = queue.Queue()
        self._cancelled = False
        self._lock = threading.Lock()
        self.status: Any = None  # the chat's StatusLine, erased before a question is asked

    # --- tool side (any thread) --------------------------------------------------------
    def approval(self, request: Any) -> str:
        """The ``approval_callback``: once, session, always, deny, or interrupted (Ctrl-C)."""
        def ask() -> str:
            self.err.write(f"\n⚠ {request.description}\n  {request.command}\n")
            answer = self.read_line("Allow? [o]nce, [s]ession, [a]lways, [d]eny: ")
            choice = ANSWERS.get(answer.strip().lower(), "deny")
            self.err.write(f"  → {OUTCOMES[choice]}\n")  # the answer on its own line
            return choice

        return self._put(Question(ask, "deny", "interrupted",
                                  time.monotonic() + float(request.timeout)))

    def clarify(self, question: str, choices: list[str] | None = None) -> str:
        """The ``clarify_callback``: the user's answer ('' when none)."""
        def ask() -> str:
            self.err.write(f"\n? {question}\n")
            for number, choice in enumerate(choices or (), 1):
                self.err.write(f"  {number}. {choice}\n")
            answer = self.read_line("answer: ").strip()
            if choices and answer.isdigit() and 1 <= int(answer) <= len(choices):
                return choices[int(answer) - 1]
            return answer

        return self._put(Question(ask, "", ""))

    def _put(self, question: Question) -> str:
        if threading.current_thread() is threading.main_thread():
            self._answer(question)  # nobody else reads the terminal now
        else:
            with self._lock:
                if self._cancelled:
                    return question.on_interrupt
                self._queue.put(question)
            question.done.wait()
        return question.answer if question.answer is not None else question.default

    # --- main-thread side --------------------------------------------------------------
    def serve(self, wait: float) -> None:
        """Ask the next queued question, waiting up to ``wait`` seconds for one. A Ctrl-C at
        the question answers it as interrupted and propagates."""
        try:
            question = self._queue.get(timeout=wait)
        except queue.Empty:
            return
        if self._cancelled:
            question.finish(question.on_interrupt)
            return
        if question.expired:
            question.finish(question.default)
            return
        self._answer(question)

    def _answer(self, question: Question) -> None:
        if self.status is not None:
            self.status.erase_soon()
        try:
            answer = question.ask()
        except EOFError:
            answer = question.default
        except KeyboardInterrupt:
            question.finish(question.on_interrupt)
            raise
        if question.expired:
            self.err.write("(too late: nobody waited for that answer any more; it was not used)\n")
            answer = question.default
        question.finish(answer)

    def start_turn(self) -> None:
        with self._lock:
            self._cancelled = False

    def cancel(self) -> None:
        """The turn was interrupted: every waiting and later question is answered as
        interrupted until the next turn starts."""
        with self._lock:
            self._cancelled = True
            pending = []
            while True:
                try:
                    pending.append(self._queue.get_nowait())
                except queue.Empty:
                    break
        for question in pending:
            question.finish(question.on_interrupt)

"""Run one agent turn so that Ctrl-C interrupts it cleanly.

The turn runs on a worker thread; the main thread waits and turns ``KeyboardInterrupt`` into
:meth:`Agent.interrupt`, which stops the model call or the running tool promptly and leaves a
valid history. A second Ctrl-C while the turn winds down is ignored. While it waits, the main
thread asks the questions the turn's tools queue (see :mod:`.questions`) and reads the lines
typed meanwhile (``/steer``, ``/queue``; see :mod:`.busy_input`).

SIGTERM and SIGHUP (a service manager, ``timeout``, a closed terminal) interrupt the turn the
same way, so the commands its tools started are stopped and the turn is stored as
interrupted; then :class:`ChatStopped` ends the chat with exit code 128 + the signal.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import click

from ..loop import Agent, EventSink, TurnResult

if TYPE_CHECKING:  # only an interactive chat has them
    from .questions import TerminalQuestions
    from .status import StatusLine


class ChatStopped(click.exceptions.Exit):
    """hermes got SIGTERM or SIGHUP during a turn: the turn was interrupted; the chat ends
    (the ``hermes`` root returns ``exit_code``, 128 + the signal's number)."""

    def __init__(self, signum: int):
        super().__init__(128 + signum)
        self.signum = signum


class _StopSignal(KeyboardInterrupt):
    """Raised on the main thread by the SIGTERM/SIGHUP handler: handled like a Ctrl-C."""


STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP")
                     if hasattr(signal, name))


InputPoll = Callable[[float], None]  # reads what was typed, waiting up to that many seconds


def run_turn(agent: Agent, message: str, on_event: EventSink,
             questions: TerminalQuestions | None = None,
             status: StatusLine | None = None, poll_input: InputPoll | None = None) -> TurnResult:
    """Run one turn; raises :class:`ChatStopped` after the turn when SIGTERM or SIGHUP came."""
    received: list[int] = []
    try:
        with _stop_signals(received):
            result = _run_turn(agent, message, on_event, questions, status, poll_input)
    except _StopSignal:  # before the turn started: nothing to interrupt
        raise ChatStopped(received[0]) from None
    if received:
        raise ChatStopped(received[0])
    return result


@contextmanager
def _stop_signals(received: list[int]) -> Iterator[None]:
    """While the block runs (on the main thread), SIGTERM and SIGHUP raise
    :class:`_StopSignal` there, once; later ones are ignored (the turn is winding down)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, _frame: Any) -> None:
        if not received:
            received.append(signum)
            raise _StopSignal()

    previous = {sig: signal.signal(sig, stop) for sig in STOP_SIGNALS}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _run_turn(agent: Agent, message: str, on_event: EventSink,
              questions: TerminalQuestions | None, status: StatusLine | None,
              poll_input: InputPoll | None) -> TurnResult:
    box: dict[str, Any] = {}
    done = threading.Event()  # (an interrupted Thread.join can misreport is_alive)

    def work() -> None:
        # Ctrl-C must reach the main thread: a SIGINT the kernel hands to another thread would
        # not wake the main thread from a terminal read (a question being asked). Threads this
        # one starts (tool pools, approval waits, store upkeep) inherit the mask.
        if hasattr(signal, "pthread_sigmask"):
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            box["result"] = agent.run_conversation(message, on_event=on_event)
        except BaseException as exc:  # re-raised on the calling thread
            box["error"] = exc
        finally:
            done.set()

    if questions is not None:
        questions.start_turn()
    # Between the worker's start and the wait's ``try``, a Ctrl-C would escape with the turn
    # still running. SIGINT is held back on this thread for that stretch (the worker inherits
    # the mask) and delivered inside the ``try``; one that still lands there (another thread
    # took the signal) interrupts the turn the same way.
    held = _hold_sigint()
    worker = threading.Thread(target=work, name="hermes-turn", daemon=True)
    try:
        worker.start()
        _wait(agent, done, questions, status, poll_input, held, interrupted=False)
    except KeyboardInterrupt:
        if not (worker.is_alive() or done.is_set()):
            raise  # the turn never started: nothing to stop
        _interrupt(agent, questions)
        _wait(agent, done, questions, status, None, held=False, interrupted=True)
    finally:
        if held and _is_blocked():
            _release_sigint()
    if status is not None:
        status.hide()
    if "error" in box:
        raise box["error"]
    return box["result"]


def _wait(agent: Agent, done: threading.Event, questions: TerminalQuestions | None,
          status: StatusLine | None, poll_input: InputPoll | None, held: bool,
          interrupted: bool) -> None:
    """Wait for the turn on the main thread: redraw the status line, ask the tools'
    questions, read the lines typed meanwhile, and turn the first Ctrl-C into :meth:`Agent.interrupt` (later ones are
    ignored while the turn winds down)."""
    while not done.is_set():
        try:
            if held:
                held = False
                _release_sigint()  # a Ctrl-C pressed since the start arrives here
            if status is not None:
                status.tick()
            if questions is not None:
                questions.serve(0.02 if poll_input else 0.05)
            if poll_input is not None and not done.is_set():
                poll_input(0.03)
            elif questions is None:
                done.wait(0.05)
        except KeyboardInterrupt:
            if not interrupted:
                interrupted = True
                _interrupt(agent, questions)


def _interrupt(agent: Agent, questions: TerminalQuestions | None) -> None:
    agent.interrupt()
    if questions is not None:
        questions.cancel()


def _hold_sigint() -> bool:
    """Block SIGINT on this (the main) thread; False where that is not possible."""
    if not hasattr(signal, "pthread_sigmask") or \
            threading.current_thread() is not threading.main_thread():
        return False
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    return True


def _release_sigint() -> None:
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def _is_blocked() -> bool:
    return signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, set())

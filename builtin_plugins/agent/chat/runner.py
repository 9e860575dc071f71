"""Run one agent turn so that Ctrl-C interrupts it cleanly.

The turn runs on a worker thread; the main thread waits and turns ``KeyboardInterrupt`` into
:meth:`Agent.interrupt`, which stops the model call or the running tool promptly and leaves a
valid history. A second Ctrl-C while the turn winds down is ignored. While it waits, the main
thread asks the questions the turn's tools queue (see :mod:`.questions`).
"""

from __future__ import annotations

import signal
import threading
from typing import TYPE_CHECKING, Any

from ..loop import Agent, EventSink, TurnResult

if TYPE_CHECKING:  # only an interactive chat has them
    from .questions import TerminalQuestions
    from .status import StatusLine


def run_turn(agent: Agent, message: str, on_event: EventSink,
             questions: TerminalQuestions | None = None,
             status: StatusLine | None = None) -> TurnResult:
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
    threading.Thread(target=work, name="hermes-turn", daemon=True).start()
    interrupted = False
    while not done.is_set():
        try:
            if status is not None:
                status.tick()
            if questions is not None:
                questions.serve(0.05)
            else:
                done.wait(0.05)
        except KeyboardInterrupt:
            if not interrupted:
                interrupted = True
                agent.interrupt()
                if questions is not None:
                    questions.cancel()
    if status is not None:
        status.hide()
    if "error" in box:
        raise box["error"]
    return box["result"]

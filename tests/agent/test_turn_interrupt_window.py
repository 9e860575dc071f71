"""A Ctrl-C landing between the start of a turn's worker and the main thread's wait must
interrupt that turn, not escape and end the chat with the turn still running."""

from __future__ import annotations

import signal
import sys
import threading
from typing import Any

import pytest

from hermes_agent.builtin_plugins.agent.chat import runner


class SlowAgent:
    """Runs until interrupted (at most 10 s), then reports how the turn ended."""

    def __init__(self) -> None:
        self.stop = threading.Event()
        self.interrupts = 0

    def interrupt(self) -> None:
        self.interrupts += 1
        self.stop.set()

    def run_conversation(self, message: str, on_event: Any = None) -> str:
        return "interrupted" if self.stop.wait(10) else "ran to the end"


def thread_class(after_start: Any) -> type[threading.Thread]:
    class Thread(threading.Thread):
        def start(self) -> None:
            super().start()
            after_start()  # what a Ctrl-C right after the start does

    return Thread


@pytest.mark.skipif(sys.platform == "win32" or not hasattr(signal, "pthread_sigmask"),
                    reason="POSIX signal masks")
def test_a_sigint_right_after_the_worker_starts_interrupts_the_turn(monkeypatch) -> None:
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        monkeypatch.setattr(runner.threading, "Thread",
                            thread_class(lambda: signal.raise_signal(signal.SIGINT)))
        agent = SlowAgent()
        assert runner.run_turn(agent, "hi", on_event=None) == "interrupted"  # type: ignore[arg-type]
        assert agent.interrupts == 1
        assert signal.SIGINT not in signal.pthread_sigmask(signal.SIG_BLOCK, set())
    finally:
        signal.signal(signal.SIGINT, previous)


def test_a_keyboard_interrupt_before_the_wait_still_stops_the_turn(monkeypatch) -> None:
    """The signal can be taken by another thread and raised on this one at any point: the
    turn is interrupted and waited for all the same."""

    def interrupt_now() -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(runner.threading, "Thread", thread_class(interrupt_now))
    agent = SlowAgent()
    assert runner.run_turn(agent, "hi", on_event=None) == "interrupted"  # type: ignore[arg-type]
    assert agent.interrupts == 1
    if hasattr(signal, "pthread_sigmask"):
        assert signal.SIGINT not in signal.pthread_sigmask(signal.SIG_BLOCK, set())


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_a_ctrl_c_during_a_slash_command_keeps_the_chat(kernel_for, monkeypatch) -> None:
    """A real Ctrl-C while a (plugin's) slash command runs stops that command; the chat
    reads the next line."""
    import io

    from hermes_agent.builtin_plugins.agent.chat.questions import TerminalQuestions
    from hermes_agent.builtin_plugins.agent.chat.repl import interactive
    from hermes_agent.builtin_plugins.agent.loop import Agent

    kernel = kernel_for()

    def slow(raw: str) -> str:
        signal.raise_signal(signal.SIGINT)  # the user presses Ctrl-C while it runs
        return "finished"

    assert kernel.register_plugin(
        lambda ctx: ctx.register_command("slow", slow, "takes long"), "slowpoke").state == "loaded"
    lines = iter(["/slow", "/quit"])
    monkeypatch.setattr("builtins.input", lambda prompt="": next(lines))
    out = io.StringIO()
    assert interactive(Agent(kernel), kernel, TerminalQuestions(io.StringIO()), out=out) == 0
    text = out.getvalue()
    assert "[interrupted]" in text and "finished" not in text
    assert kernel.plugins["slowpoke"].state == "loaded"  # the user's Ctrl-C is not the plugin's fault

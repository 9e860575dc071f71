"""The answer reader of chat questions, in a real pseudo-terminal: Ctrl-C typed the moment the
prompt appears always interrupts (readline's ``input()`` loses such a Ctrl-C when it lands
between printing the prompt and waiting for a key), typed answers and Ctrl-D, and answers stay
out of the chat's readline history."""

from __future__ import annotations

import sys
import time

import pytest

from .pty_terminal import Terminal

CHILD = r"""
import readline, sys
from hermes_agent.builtin_plugins.agent.chat.terminal_input import read_line
for _ in range(int(sys.argv[1])):
    try:
        print("LINE[" + read_line("ask: ") + "]", flush=True)
    except KeyboardInterrupt:
        print("INTERRUPTED", flush=True)
    except EOFError:
        print("EOF", flush=True)
print("HISTORY", readline.get_current_history_length(), flush=True)
"""

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")


def _child(rounds: int) -> Terminal:
    return Terminal([sys.executable, "-c", CHILD, str(rounds)], {"TERM": "dumb", "PATH": ""})


def test_ctrl_c_the_moment_the_prompt_appears_always_interrupts() -> None:
    rounds = 40  # readline's input() lost about one such Ctrl-C in 40 here
    term = _child(rounds)
    for _ in range(rounds):
        term.read_until("ask: ")
        started = time.monotonic()
        term.type("\x03")
        term.read_until("INTERRUPTED", timeout=5)
        assert time.monotonic() - started < 5
    term.read_until("HISTORY ")
    assert term.read_until("\n").strip() == "0"
    assert term.wait() == 0


def test_answers_and_end_of_input_stay_out_of_the_history() -> None:
    term = _child(3)
    term.read_until("ask: ")
    term.type("once\r")
    assert "LINE[once]" in term.read_until("ask: ")
    term.type("\x04")  # Ctrl-D on an empty line
    assert "EOF" in term.read_until("ask: ")
    term.type("blu\x7fue\r")  # the terminal's own erase key edits the answer
    assert "LINE[blue]" in term.read_until("HISTORY ")
    assert term.read_until("\n").strip() == "0"
    assert term.wait() == 0


def test_a_ctrl_c_at_any_bytecode_never_leaves_a_dangling_wakeup_fd() -> None:
    """Ctrl-C raises between any two bytecodes, also while the wake-up fd is being installed or
    put back. Raised at each instruction of the wake-up context in turn, it must never leave
    the wake-up fd naming a closed descriptor (the next signal would write into whatever file
    reuses that number), and the next read must put back the fd that was there before."""
    import gc
    import os
    import signal

    from hermes_agent.builtin_plugins.agent.chat import terminal_input

    code = terminal_input._signal_wakeup.__wrapped__.__code__

    def run(stop_at: int | None) -> int:
        seen = 0

        def trace(frame, event, arg):  # noqa: ANN001, ANN202
            nonlocal seen
            if frame.f_code is not code:
                return None
            frame.f_trace_opcodes = True
            if event == "opcode":
                seen += 1
                if seen == stop_at:
                    raise KeyboardInterrupt
            return trace

        sys.settrace(trace)
        try:
            with terminal_input._signal_wakeup():
                pass
        except KeyboardInterrupt:
            pass
        finally:
            sys.settrace(None)
        return seen

    assert signal.set_wakeup_fd(-1) == -1
    instructions = run(None)
    assert instructions > 10
    for stop_at in range(1, instructions + 1):
        run(stop_at)
        gc.collect()  # a cut-short generator's sockets would be closed here
        current = signal.set_wakeup_fd(-1)
        if current != -1:
            os.fstat(current)  # still open: raises OSError if it dangles
            signal.set_wakeup_fd(current)
        run(None)  # the next read takes over and puts the old fd back
        assert signal.set_wakeup_fd(-1) == -1, stop_at

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

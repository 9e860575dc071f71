"""Terminal questions: tools ask from worker threads, only the main thread reads the terminal."""

from __future__ import annotations

import io
import threading
import time
from typing import Any

import pytest

from hermes_agent.api import ApprovalRequest
from hermes_agent.builtin_plugins.agent.chat.questions import TerminalQuestions


def ask_in_thread(fn: Any, *args: Any) -> tuple[threading.Thread, dict[str, Any]]:
    box: dict[str, Any] = {}
    thread = threading.Thread(target=lambda: box.setdefault("answer", fn(*args)), daemon=True)
    thread.start()
    return thread, box


def serve_until(questions: TerminalQuestions, thread: threading.Thread) -> None:
    deadline = time.monotonic() + 5
    while thread.is_alive() and time.monotonic() < deadline:
        questions.serve(0.02)
    assert not thread.is_alive()


def request(timeout: float = 60) -> ApprovalRequest:
    return ApprovalRequest("rm -rf build", "recursive delete", ("recursive_delete",),
                           timeout=timeout)


def test_a_worker_threads_question_is_asked_on_the_main_thread() -> None:
    readers: list[str] = []

    def fake_input(prompt: str) -> str:
        readers.append(threading.current_thread().name)
        return "s" if "Allow" in prompt else "2"

    err = io.StringIO()
    questions = TerminalQuestions(err, read_line=fake_input)
    thread, box = ask_in_thread(questions.approval, request())
    serve_until(questions, thread)
    assert box["answer"] == "session" and "rm -rf build" in err.getvalue()
    thread, box = ask_in_thread(questions.clarify, "Which colour?", ["red", "blue"])
    serve_until(questions, thread)
    assert box["answer"] == "blue" and "  2. blue" in err.getvalue()
    assert readers == [threading.main_thread().name] * 2


def test_ctrl_c_at_a_question_answers_it_as_interrupted_and_propagates() -> None:
    def interrupted(prompt: str) -> str:
        raise KeyboardInterrupt

    questions = TerminalQuestions(io.StringIO(), read_line=interrupted)
    thread, box = ask_in_thread(questions.approval, request())
    with pytest.raises(KeyboardInterrupt):
        while thread.is_alive():
            questions.serve(0.02)
    thread.join(2)
    assert box["answer"] == "interrupted"


def test_cancel_answers_waiting_and_later_questions_until_the_next_turn() -> None:
    questions = TerminalQuestions(io.StringIO(), read_line=lambda prompt: "o")
    thread, box = ask_in_thread(questions.approval, request())
    time.sleep(0.1)  # queued, not yet served
    questions.cancel()
    thread.join(2)
    assert box["answer"] == "interrupted"
    thread, box = ask_in_thread(questions.clarify, "still there?", None)
    thread.join(2)
    assert box["answer"] == ""  # asked after the interrupt: not put to the user at all
    questions.start_turn()
    thread, box = ask_in_thread(questions.approval, request())
    serve_until(questions, thread)
    assert box["answer"] == "once"


def test_an_answer_given_after_the_deadline_is_not_used() -> None:
    def slow(prompt: str) -> str:
        time.sleep(0.8)
        return "a"

    err = io.StringIO()
    questions = TerminalQuestions(err, read_line=slow)
    thread, box = ask_in_thread(questions.approval, request(timeout=0.5))
    serve_until(questions, thread)
    assert box["answer"] == "deny" and "too late" in err.getvalue()

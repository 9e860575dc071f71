"""A question a turn asks its chat ends exactly once: answered, timed out or closed. The
interleavings are driven step by step (no sleeps): the asker's timeout fires while the loop
takes the next message."""

from __future__ import annotations

import asyncio
import threading
import time

from hermes_agent.builtin_plugins.gateway.chat import Chat
from hermes_agent.builtin_plugins.gateway.questions import Question, answers_question


def chat_asking(user: str) -> tuple[Chat, Question]:
    chat = Chat("testchat:A", "testchat", "A", None, asyncio.Queue())
    chat.asker = user
    question = chat.question = Question(user)  # what ChatQuestions._ask holds while it waits
    return chat, question


def test_a_message_after_the_timeout_fired_is_not_taken_as_the_answer() -> None:
    chat, question = chat_asking("alice")
    # the asker's wait times out; its cleanup (chat.question = None) has not run yet
    assert question.wait(time.monotonic()) is None
    assert chat.question is question
    # the loop now sees alice's next message: a message of its own, not the dead answer
    assert not answers_question(chat, "alice", "once")
    assert question.wait(time.monotonic()) is None  # and the asker still saw a timeout


def test_an_answer_given_before_the_timeout_fired_is_what_the_asker_gets() -> None:
    chat, question = chat_asking("alice")
    assert answers_question(chat, "alice", "once")
    assert question.wait(time.monotonic()) == "once"  # deadline passed: the answer still wins
    assert not answers_question(chat, "alice", "session")  # answered once only


def test_a_closed_question_takes_no_answer_and_wakes_its_asker() -> None:
    chat, question = chat_asking("alice")
    got: list[str | None] = []
    waiter = threading.Thread(target=lambda: got.append(question.wait(time.monotonic() + 60)))
    waiter.start()
    chat.close_question()  # the turn ended or was stopped
    waiter.join(30)
    assert got == [None] and chat.question is None
    assert not question.answer("once")


def test_only_the_asker_answers() -> None:
    chat, question = chat_asking("alice")
    assert not answers_question(chat, "bob", "once")
    assert question.open
    assert answers_question(chat, "alice", "deny")

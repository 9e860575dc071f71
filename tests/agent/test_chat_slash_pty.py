"""The daily slash commands in a real ``hermes chat`` on a pseudo-terminal, against the
scripted fake model server: typing during a turn (``/steer``, ``/queue``, ``/q``, a plain
line), ``/background``, ``/branch``, ``/resume``, ``/personality``, ``/tools`` and
``/toolsets`` for the session, ``/verbose`` and ``/reasoning``."""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from typing import Any

import pytest
import yaml

from hermes_agent.testing.fake_llm import reply_text, reply_tool_call

from .test_chat_pty import start_chat

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")


def configure(home: Path, server: Any, **extra: Any) -> None:
    config = {"model": {"provider": "custom", "base_url": server.openai_base_url,
                        "default": "fake-model", "max_retries": 0},
              "sessions": {"auto_title": False},  # the script answers the chat's requests only
              "plugins": {"enabled": ["calculator"]}}
    config.update(extra)
    (home / "config.yaml").write_text(yaml.safe_dump(config))


def last_user(post: Any) -> Any:
    return [m for m in post.body["messages"] if m["role"] == "user"][-1]["content"]


def test_steer_and_queue_typed_while_a_turn_runs(home: Path, calculator: Path,
                                                 server) -> None:
    configure(home, server)
    release = threading.Event()
    server.script(reply_tool_call("calculate", {"expression": "6*7"}, hold=release),
                  reply_text("It is 42."),
                  reply_text("Queued answer."),
                  reply_text("Plain answer."))
    term = start_chat(home)
    term.read_until("› ")
    term.type("what is six times seven?\r")
    term.type("/steer answer in French\r")  # the model call is held: the turn runs
    assert "Steer queued" in term.read_until("next tool result.")
    term.type("/q what comes next?\r")
    term.read_until("Queued for after this turn (1 waiting): what comes next?")
    term.type("a plain line\r")
    term.read_until("Queued as the next message")
    release.set()
    screen = term.read_until("Plain answer.")
    assert "It is 42." in screen and "Queued answer." in screen
    assert "steer delivered with the tool result: answer in French" in screen
    term.read_until("› ")
    posts = server.posts()
    assert len(posts) == 4
    tool = posts[1].body["messages"][-1]
    assert tool["role"] == "tool" and "42" in tool["content"]
    assert "[OUT-OF-BAND USER MESSAGE" in tool["content"]
    assert tool["content"].rstrip().endswith("answer in French\n[/OUT-OF-BAND USER MESSAGE]")
    # the steer is part of the stored turn; the queued lines came as turns of their own, in order
    assert last_user(posts[1]) == "what is six times seven?"
    assert last_user(posts[2]) == "what comes next?"
    assert last_user(posts[3]) == "a plain line"
    term.type("/quit\r")
    assert term.wait() == 0


def test_a_steer_no_tool_result_carried_becomes_the_next_message(home: Path, calculator: Path,
                                                                 server) -> None:
    configure(home, server)
    release = threading.Event()
    server.script(reply_text("A plain answer.", hold=release), reply_text("Steered answer."))
    term = start_chat(home)
    term.read_until("› ")
    term.type("hello\r")
    term.type("/steer be brief\r")
    term.read_until("Steer queued")
    release.set()
    screen = term.read_until("Steered answer.")
    assert "A plain answer." in screen and "it is sent as the next message" in screen
    term.read_until("› ")
    assert last_user(server.posts()[-1]) == "be brief"
    term.type("/steer when idle\r")  # no turn runs: it is a message
    server.script(reply_text("Idle answer."))
    assert "Idle answer." in term.read_until("Idle answer.")
    term.read_until("› ")
    term.type("/queue later\r")
    server.script(reply_text("Later answer."))
    term.read_until("Later answer.")
    assert last_user(server.posts()[-1]) == "later"
    term.read_until("› ")
    term.type("/quit\r")
    assert term.wait() == 0

"""The daily slash commands in a real ``hermes chat`` on a pseudo-terminal, against the
scripted fake model server: typing during a turn (``/steer``, ``/queue``, ``/q``, a plain
line), ``/background``, ``/branch``, ``/resume``, ``/personality``, ``/tools`` and
``/toolsets`` for the session, ``/verbose``, ``/reasoning``, ``/retry``, ``/undo``, ``/title``
and ``/usage``."""

from __future__ import annotations

import re
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


def users(post: Any) -> list[Any]:
    """What the user said in a recorded request, in order."""
    return [m["content"] for m in post.body["messages"] if m["role"] == "user"]


def last_user(post: Any) -> Any:
    return users(post)[-1]


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
    term.type("/agents\r")  # answered at once
    term.read_until("No subagents in this chat yet")
    term.type("/usage\r")  # any other command waits for the turn to end
    term.read_until("/usage runs when this turn ends.")
    release.set()
    screen = term.read_until("Plain answer.")
    assert "It is 42." in screen and "Queued answer." in screen
    assert "› what comes next?" in screen and "› a plain line" in screen  # as if typed
    assert term.read_until("/usage\r\n").endswith("› /usage\r\n")  # after the rest
    assert "steer delivered with the tool result: answer in French" in screen
    assert "4 model calls" in term.read_until("› ")
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


SWITCH_LOG = '''
import json, os
from hermes_agent.api import MemoryProvider


class SwitchLog(MemoryProvider):
    name = "switchlog"

    def is_available(self):
        return True

    def initialize(self, session_id, **kwargs):
        self.path = os.path.join(kwargs["hermes_home"], "switches.jsonl")

    def get_tool_schemas(self):
        return []

    def on_session_switch(self, new_session_id, **kwargs):
        with open(self.path, "a") as log:
            log.write(json.dumps({"new": new_session_id, **kwargs}) + "\\n")


def register(ctx):
    ctx.register_memory_provider(SwitchLog())
'''


def session_of(screen: str, before: str) -> str:
    return screen.split(before, 1)[1].split()[0].strip('",.:')


def test_branch_and_resume_switch_sessions(home: Path, calculator: Path, server) -> None:
    plugin = home / "plugins" / "switchlog"
    plugin.mkdir()
    (plugin / "plugin.yaml").write_text("name: switchlog\nversion: 1.0.0\nkind: exclusive\n")
    (plugin / "__init__.py").write_text(SWITCH_LOG)
    configure(home, server, memory={"provider": "switchlog"},
              plugins={"enabled": ["calculator", "switchlog"]})
    server.script(reply_text("First answer."), reply_text("On the branch."),
                  reply_text("Back on the original."))
    term = start_chat(home)
    first = session_of(term.read_until("› "), "session ")
    term.type("remember the number 7\r")
    term.read_until("First answer.")
    term.read_until("› ")
    term.type("/title origin\r")
    term.read_until("› ")
    term.type("/branch experiment\r")
    screen = term.read_until("› ")
    assert "Branched: now in session" in screen and f"a copy of {first}" in screen
    branch = session_of(screen, "now in session ")
    assert '"experiment"' in screen and branch != first
    term.type("try something\r")
    term.read_until("On the branch.")
    term.read_until("› ")
    assert users(server.posts()[-1]) == [  # the branch holds the copied history
        "remember the number 7", "try something"]
    term.type("/resume\r")  # no argument: the recent sessions
    screen = term.read_until("› ")
    assert "Recent sessions" in screen and first in screen and "origin" in screen
    term.type("/resume origin\r")
    screen = term.read_until("› ")
    assert f"Resumed session {first} \"origin\": 2 messages." in screen
    term.type("and now?\r")
    term.read_until("Back on the original.")
    term.read_until("› ")
    assert users(server.posts()[-1]) == [
        "remember the number 7", "and now?"]  # the branch's turn is not in the original
    term.type("/resume nosuchsession\r")
    assert "No session 'nosuchsession'" in term.read_until("› ")
    term.type("/quit\r")
    assert term.wait() == 0
    import json

    switches = [json.loads(line) for line in
                (home / "switches.jsonl").read_text().splitlines()]
    assert [(s["new"], s["parent_session_id"]) for s in switches] == [
        (branch, first), (first, branch)]


def test_personality_tools_toolsets_verbose_and_reasoning(home: Path, calculator: Path,
                                                          server) -> None:
    configure(home, server, agent={"personalities": {"butler": "Answer as a formal butler."}})
    server.script(
        reply_text("Ahoy.", reasoning="Thinking about pirates."),
        reply_tool_call("unit_convert", {"value": 1, "from_unit": "km", "to_unit": "m"}),
        reply_text("Converted."),
        reply_text("No tools."),
        reply_text("Very good, sir."))
    term = start_chat(home)
    term.read_until("› ")
    term.type("/personality\r")
    screen = term.read_until("› ")
    assert "pirate" in screen and "butler" in screen and "personality: none" in screen
    term.type("/personality pirate\r")
    assert "Personality: pirate" in term.read_until("› ")
    term.type("/reasoning show\r")
    term.read_until("› ")
    term.type("/reasoning high\r")
    assert "Reasoning effort: high" in term.read_until("› ")
    term.type("/tools disable calculate\r")
    assert "Disabled calculate for this chat" in term.read_until("› ")
    term.type("hello\r")
    screen = term.read_until("› ")
    assert "Thinking about pirates." in screen and "Ahoy." in screen
    body = server.posts()[-1].body
    assert body["reasoning_effort"] == "high"
    assert "Talk like a pirate" in body["messages"][0]["content"]
    offered = [t["function"]["name"] for t in body["tools"]]
    assert "unit_convert" in offered and "calculate" not in offered

    term.type("/verbose\r")  # all -> verbose: full arguments and the result
    assert "Tool progress: verbose" in term.read_until("› ")
    term.type("convert\r")
    screen = term.read_until("Converted.")
    assert '"from_unit": "km"' in screen and "→ ok in" in screen and "1000" in screen
    term.read_until("› ")

    term.type("/verbose\r")
    assert "Tool progress: off" in term.read_until("› ")
    term.type("/verbose\r")
    assert "Tool progress: new (a line when the tool changes)" in term.read_until("› ")
    term.type("/toolsets\r")
    assert re.search(r"on\s+calculator\s+calculate, unit_convert", term.read_until("› "))
    term.type("/toolsets disable calculator\r")
    assert "Toolset calculator disabled for this chat" in term.read_until("› ")
    term.type("/tools enable calculate\r")  # its toolset is off now
    assert "/toolsets enable calculator adds it" in term.read_until("› ")
    term.type("/personality butler\r")
    term.read_until("› ")
    term.type("any tools?\r")
    term.read_until("No tools.")
    term.read_until("› ")
    body = server.posts()[-1].body
    offered = [t["function"]["name"] for t in body.get("tools") or ()]
    assert "unit_convert" not in offered and "calculate" not in offered and offered
    assert "formal butler" in body["messages"][0]["content"]
    assert "pirate" not in body["messages"][0]["content"]
    term.type("/personality none\r")
    term.read_until("› ")
    term.type("/personality nobody\r")
    assert "Unknown personality 'nobody'" in term.read_until("› ")
    term.type("thanks\r")
    term.read_until("Very good, sir.")
    term.read_until("› ")
    assert "butler" not in server.posts()[-1].body["messages"][0]["content"]
    term.type("/quit\r")
    assert term.wait() == 0


def test_background_runs_in_its_own_session(home: Path, calculator: Path, server) -> None:
    configure(home, server)
    release = threading.Event()
    server.script(reply_text("Background answer.", hold=release), reply_text("Foreground."))
    term = start_chat(home)
    chat_session = session_of(term.read_until("› "), "session ")
    term.type("/background list the planets\r")
    screen = term.read_until("› ")
    assert "Background task #1 started in session" in screen
    background = session_of(screen, "started in session ")
    term.type("/agents\r")
    screen = term.read_until("› ")
    assert re.search(rf"running\s+background\s+\S+\s+-\s+{background}\s+list the planets",
                     screen)
    release.set()
    screen = term.read_until("Background answer.")
    assert f"Background task ({background}) finished:" in screen
    term.read_until("› ")  # the prompt is drawn again after the answer
    term.type("/agents\r")
    assert re.search(rf"completed\s+background\s+-\s+1\s+{background}", term.read_until("› "))
    term.type("hello\r")
    term.read_until("Foreground.")
    term.read_until("› ")
    first, second = server.posts()
    assert users(first) == [
        "list the planets"]
    assert users(second) == ["hello"]
    term.type("/quit\r")
    assert term.wait() == 0
    assert chat_session != background


def test_background_typed_while_a_turn_runs_starts_at_once(home: Path, calculator: Path,
                                                           server) -> None:
    import time

    configure(home, server)
    release = threading.Event()
    server.script(reply_text("Main answer.", hold=release), reply_text("Side answer."))
    term = start_chat(home)
    term.read_until("› ")
    term.type("the main question\r")
    deadline = time.monotonic() + 20
    while not server.posts():  # the main turn's request holds the first reply
        assert time.monotonic() < deadline, "the chat sent no request"
        time.sleep(0.02)
    term.type("/bg the side question\r")
    screen = term.read_until("Side answer.")  # while the main turn still waits
    assert "Background task #1 started in session" in screen and "Main answer." not in screen
    release.set()
    term.read_until("Main answer.")
    term.read_until("› ")
    main, side = server.posts()
    assert users(side) == [
        "the side question"]
    assert users(main) == [
        "the main question"]
    term.type("/quit\r")
    assert term.wait() == 0


def test_retry_undo_title_and_usage_in_the_chat(home: Path, calculator: Path, server) -> None:
    configure(home, server)
    server.script(reply_text("First answer."), reply_text("Second try."),
                  reply_text("Fresh start."))
    term = start_chat(home)
    term.read_until("› ")
    term.type("what is the plan\r")
    assert "First answer." in term.read_until("› ")
    term.type("/retry\r")  # the same message again, the first exchange replaced
    assert "Second try." in term.read_until("› ")
    assert users(server.posts()[1]) == ["what is the plan"]
    term.type("/undo\r")
    term.read_until("› ")
    term.type("/title my plans\r")
    term.read_until("› ")
    term.type("/title\r")
    assert "my plans" in term.read_until("› ")
    term.type("something else\r")
    assert "Fresh start." in term.read_until("› ")
    sent = server.posts()[2].body["messages"]
    assert users(server.posts()[2]) == ["something else"]  # the undone exchange is gone
    assert not any(m.get("content") == "Second try." for m in sent)
    term.type("/usage\r")
    usage = term.read_until("› ")
    assert "model calls" in usage and "cost" in usage.lower()
    term.type("/quit\r")
    assert term.wait() == 0

"""One real agent turn against the scripted model server: the model starts a command with
``terminal`` ``background: true``, polls it with ``process``, and answers; the process ends
with the session (the agent's finalize)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_agent.builtin_plugins.agent.loop import Agent
from hermes_agent.builtin_plugins.agent.turn_types import AgentOptions
from hermes_agent.builtin_plugins.core_tools import background
from hermes_agent.testing import make_kernel
from hermes_agent.testing.fake_llm import FakeLLMServer, reply_text, reply_tool_call

from .test_terminal_signals import alive, wait_until

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux /proc")


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        yield fake


def test_an_agent_turn_starts_a_background_command_and_polls_it(
        tmp_path: Path, work: Path, server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(background, "new_id", lambda: "proc_fromtheturn")  # the script names it
    home = tmp_path / "home"
    config = {"model": {"provider": "custom", "base_url": server.openai_base_url,
                        "default": "fake-model", "max_retries": 0},
              "sessions": {"auto_title": False}}
    kernel = make_kernel(home, config=config, env={"HERMES_HOME": str(home)}, builtins=True)
    server.script(
        reply_tool_call("terminal", {"command": "echo building; sleep 0.5; echo built; "
                                     "sleep 60", "background": True}),
        reply_tool_call("process", {"action": "poll", "session_id": "proc_fromtheturn"},
                        delay=1.0),  # the model takes a while: the output arrives meanwhile
        reply_text("The build finished; the watcher is still running."))
    agent = Agent(kernel, AgentOptions(cwd=str(work)))
    turn = agent.run_conversation("start the build in the background and tell me when done")
    assert turn.final_response == "The build finished; the watcher is still running."

    posts = server.posts()
    assert {"terminal", "process"} <= {t["function"]["name"] for t in posts[0].body["tools"]}
    results = [json.loads(m["content"]) for m in posts[-1].body["messages"]
               if m["role"] == "tool"]
    started, polled = results
    assert (started["session_id"], started["status"]) == ("proc_fromtheturn", "running")
    assert started["output"] == "building\n"
    assert (polled["status"], polled["output"]) == ("running", "built\n")
    pid: Any = started["pid"]
    assert alive(pid)
    agent.finalize("shutdown")  # the session ends: so does its process
    wait_until(lambda: not alive(pid), "the background process to end with the session", 10)
    kernel.close()


def test_processes_and_shells_survive_a_real_compress(
        tmp_path: Path, work: Path, server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(background, "new_id", lambda: "proc_beforecompress")
    home = tmp_path / "home"
    config = {"model": {"provider": "custom", "base_url": server.openai_base_url,
                        "default": "fake-model", "max_retries": 0},
              "sessions": {"auto_title": False},
              "compression": {"protect_first_n": 1, "protect_last_n": 1}}
    kernel = make_kernel(home, config=config, env={"HERMES_HOME": str(home)}, builtins=True)
    (work / "sub").mkdir()
    server.script(
        reply_tool_call("terminal", {"command": "echo one; sleep 60", "background": True}),
        reply_tool_call("terminal", {"command": "cd sub && export MARK=kept", "session": "main"}),
        reply_text("Started."), reply_text("You are welcome."))
    agent = Agent(kernel, AgentOptions(cwd=str(work)))
    agent.run_conversation("start it")
    agent.run_conversation("thanks")  # the first turn is now before the kept tail
    before = agent.session_id
    server.default_reply = reply_text("Summary: a background process and a shell were started.")
    assert agent.compress() and agent.session_id != before
    server.default_reply = None
    server.script(
        reply_tool_call("process", {"action": "list"}),
        reply_tool_call("terminal", {"command": 'pwd; echo "$MARK"', "session": "main"}),
        reply_text("Still there."))
    agent.run_conversation("are they still there?")
    results = [json.loads(m["content"]) for m in server.posts()[-1].body["messages"]
               if m["role"] == "tool"][-2:]
    listed, shell = results
    assert [p["session_id"] for p in listed["processes"]] == ["proc_beforecompress"]
    assert listed["shells"] == ["shell:main"]
    assert shell["output"].splitlines() == [str(work / "sub"), "kept"] and "note" not in shell
    pid = listed["processes"][0]["pid"]
    agent.finalize("shutdown")
    wait_until(lambda: not alive(pid), "the process to end with the compressed session", 10)
    kernel.close()

"""Local memory end to end: real agents with ``memory.provider: local`` against the fake
Chat Completions server. A fact the user states in one session reaches a later session's
request inside the ``<memory-context>`` fence, and never its stored messages."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_agent.builtin_plugins.agent.loop import Agent
from hermes_agent.testing import make_kernel
from hermes_agent.testing.fake_llm import FakeLLMServer, reply_text, reply_tool_call

FACT = "I use neovim for everything"


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        yield fake


def kernel(home: Path, server: FakeLLMServer) -> Any:
    config = {"model": {"provider": "custom", "base_url": server.openai_base_url,
                        "default": "fake-model", "max_retries": 0},
              "memory": {"provider": "local"},
              "sessions": {"auto_title": False}}  # the script answers the chat's requests only
    return make_kernel(home, config=config, env={"HERMES_HOME": str(home)}, builtins=True)


def test_a_fact_from_session_one_is_recalled_in_a_later_session(home: Path,
                                                                server: FakeLLMServer) -> None:
    server.script(reply_text("Sure, let's set up LSP."), reply_text("Use lazy.nvim."))
    first = Agent(kernel(home, server))
    first.run_conversation(f"Hi! {FACT}. Can you help me set up LSP?")
    assert first.memory is not None and first.memory.drain(5)  # sync_turn has run
    first.finalize("shutdown")
    request = server.posts()[0].body["messages"]
    assert "<memory-context>" not in request[1]["content"]  # nothing known yet
    assert "## Local memory" in request[0]["content"]

    later = Agent(kernel(home, server))  # a new process-like agent, same HERMES_HOME
    later.run_conversation("Which neovim plugins should I install?")
    request = server.posts()[1].body["messages"]
    system, user = request[0]["content"], request[-1]["content"]
    assert user.startswith("Which neovim plugins should I install?\n\n<memory-context>")
    fenced = user.split("<memory-context>", 1)[1].split("</memory-context>", 1)[0]
    assert f"- {FACT}. (#1, " in fenced
    assert FACT not in system  # recall goes to the turn, never the cached prompt
    stored = later.sessions.conversation(later.session_id)
    assert stored and all(FACT not in json.dumps(m) and "memory-context" not in json.dumps(m)
                          for m in stored + later.history)


def test_the_model_uses_the_tools_through_the_agent(home: Path, server: FakeLLMServer) -> None:
    server.script(reply_tool_call("remember_fact", {"text": "The user deploys on Fly.io"},
                                  id="c1"),
                  reply_tool_call("recall_facts", {"query": "deploy"}, id="c2"),
                  reply_text("Noted."))
    agent = Agent(kernel(home, server))
    turn = agent.run_conversation("note where I deploy")
    assert turn.completed and turn.final_response == "Noted."
    offered = {t["function"]["name"] for t in server.posts()[0].body["tools"]}
    assert {"recall_facts", "remember_fact", "forget_fact"} <= offered
    results = [json.loads(m["content"]) for m in agent.history if m["role"] == "tool"]
    assert results[0]["stored"] and results[0]["fact"]["source_session"] == agent.session_id
    assert [f["text"] for f in results[1]["facts"]] == ["The user deploys on Fly.io"]

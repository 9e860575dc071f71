"""The mem0 provider end to end: a real agent against the fake model server and the fake Mem0
server. A turn is stored in Mem0 and a later session's request carries the recalled memory in
the ``<memory-context>`` fence; a hung Mem0 does not hold a turn past
``memory.prefetch_timeout``."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_agent.builtin_plugins.agent.loop import Agent
from hermes_agent.testing import make_kernel
from hermes_agent.testing.fake_llm import FakeLLMServer, reply_text

from .mem0_support import KEY


@pytest.fixture
def llm() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as server:
        yield server


@pytest.fixture
def kernel_for(home: Path, llm: FakeLLMServer, mem0):  # type: ignore[no-untyped-def]
    def build(manager_timeout: float = 3.0, **settings: Any) -> Any:
        """``manager_timeout``: memory.prefetch_timeout; ``settings``: the plugin's."""
        config = {"model": {"provider": "custom", "base_url": llm.openai_base_url,
                            "default": "fake-model", "max_retries": 0},
                  "memory": {"provider": "mem0", "prefetch_timeout": manager_timeout},
                  "sessions": {"auto_title": False},  # the script answers the chat only
                  "plugins": {"entries": {"mem0": {"max_retries": 0, **settings}}}}
        return make_kernel(home, config=config, builtins=True,
                           env={"HERMES_HOME": str(home), "MEM0_API_KEY": KEY,
                                "MEM0_HOST": mem0.url})
    return build


def user_turn(request_body: dict[str, Any]) -> str:
    return str(request_body["messages"][-1]["content"])


def test_a_turn_is_stored_and_recalled_in_a_later_session(kernel_for, llm, mem0) -> None:
    kernel = kernel_for()
    first = Agent(kernel)
    llm.script(reply_text("Noted: green tea."))
    assert first.run_conversation("I drink green tea every morning").completed
    assert first.memory.drain(5)
    [stored] = mem0.memories()
    assert stored["memory"] == "I drink green tea every morning"
    assert stored["user_id"] == "hermes-user" and stored["agent_id"] == "hermes"
    assert stored["metadata"]["session_id"] == first.session_id
    system = llm.posts()[0].body["messages"][0]["content"]
    assert "Long-term memory (Mem0)" in system and "mem0_search" in system
    offered = [t["function"]["name"] for t in llm.posts()[0].body["tools"]]
    assert {"mem0_search", "mem0_add", "mem0_forget"} <= set(offered)
    first.finalize("shutdown")

    later = Agent(kernel)  # a new session
    assert later.session_id != first.session_id
    llm.script(reply_text("Green tea."))
    assert later.run_conversation("what do I drink?").final_response == "Green tea."
    sent = user_turn(llm.last.body)
    assert sent.startswith("what do I drink?\n\n<memory-context>")
    fenced = sent.split("<memory-context>", 1)[1].split("</memory-context>", 1)[0]
    assert "- I drink green tea every morning" in fenced
    assert "<memory-context>" not in llm.last.body["messages"][0]["content"]
    stored_turns = later.sessions.conversation(later.session_id)
    assert all("memory-context" not in str(m.get("content")) for m in stored_turns)


def test_a_hung_mem0_does_not_hold_the_turn_past_the_prefetch_timeout(kernel_for, llm,
                                                                       mem0) -> None:
    kernel = kernel_for(manager_timeout=1.0, timeout=30, prefetch_timeout=30)
    agent = Agent(kernel)
    mem0.hang(60, always=True)
    llm.script(reply_text("answered"))
    started = time.monotonic()
    turn = agent.run_conversation("hello there")
    elapsed = time.monotonic() - started
    assert turn.completed and turn.final_response == "answered"
    assert elapsed < 10  # the manager's 1 s, not Mem0's 60 s nor the plugin's 30 s budget
    assert user_turn(llm.last.body) == "hello there"  # no recall this turn
    assert mem0.requests_to("POST", "/v2/memories/search/")  # it was asked, and hung

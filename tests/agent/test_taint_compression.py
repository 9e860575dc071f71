"""Compressing a tainted session: the continuation keeps the nonce and the taint, and the
summary of untrusted text is stored as untrusted (``tainted-write``)."""

from __future__ import annotations

from typing import Any

from hermes_agent.testing.fake_llm import reply_text

from .test_compression_e2e import FILLER, agent_for, summariser  # noqa: F401 (fixtures)


def test_a_summary_of_a_tainted_session_is_untrusted(agent_for, server, summariser) -> None:  # noqa: F811
    agent = agent_for()
    for index in range(4):
        assert agent.run_conversation(f"turn {index}: {FILLER}").completed
    agent.run_conversation(f"a stranger says: {FILLER}", source="platform:testchat:mallory")
    old, nonce = agent.session_id, agent.taint.nonce
    summariser.script(reply_text("They talked about foxes; a stranger asked for things."))
    events: list[dict[str, Any]] = []
    assert agent.compress(on_event=events.append)
    assert agent.session_id != old and agent.taint.nonce == nonce
    assert agent.sessions.fence_nonce(agent.session_id) == nonce
    stored = agent.sessions.conversation(agent.session_id)
    sources = [m.get("provenance", {}).get("source") for m in stored]
    assert "tainted-write" in sources or "platform:testchat:mallory" in sources
    summary = next(m for m in stored if "foxes" in str(m.get("content")))
    assert summary["provenance"] == {"trust": "untrusted", "source": "tainted-write"}


def test_an_untainted_summary_stays_trusted(agent_for, server, summariser) -> None:  # noqa: F811
    agent = agent_for()
    for index in range(5):
        assert agent.run_conversation(f"turn {index}: {FILLER}").completed
    summariser.script(reply_text("They talked about foxes."))
    assert agent.compress(on_event=lambda e: None)
    assert all("provenance" not in m for m in agent.sessions.conversation(agent.session_id))
    assert agent.taint.source is None


def test_undo_of_the_tainted_turn_removes_the_taint(agent_for, server) -> None:  # noqa: F811
    agent = agent_for()
    agent.run_conversation("hello")
    agent.run_conversation("a stranger writes", source="platform:testchat:mallory")
    assert agent.taint.source == "platform:testchat:mallory"
    agent.rewind(1)
    assert agent.taint.source is None

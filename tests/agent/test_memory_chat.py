"""Builtin memory end to end: ``hermes chat -q`` against the fake model server. A fact the
model saves in one session is in the next session's system prompt, not in its own."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hermes_agent.cli import root as cli_root
from hermes_agent.testing.fake_llm import reply_text, reply_tool_call


@pytest.fixture
def cli(kernel_for):  # type: ignore[no-untyped-def]
    return lambda *args: cli_root.main(list(args), kernel_factory=kernel_for)


def system_prompt(body: dict[str, Any]) -> str:
    first = body["messages"][0]
    assert first["role"] == "system"
    return str(first["content"])


def test_a_fact_saved_in_one_session_is_in_the_next_sessions_prompt(cli, server, home: Path,
                                                                    capsys) -> None:
    fact = "User's project is a Rust web service at ~/code/myapi"
    server.script(reply_tool_call("memory", {"target": "memory", "action": "add",
                                             "content": fact}),
                  reply_text("Noted."))
    assert cli("chat", "-q", "remember where my project is") == 0
    first, second = server.posts()[0].body, server.posts()[1].body
    assert "memory" in [t["function"]["name"] for t in first["tools"]]
    result = json.loads(second["messages"][-1]["content"])
    assert result["entries"] == [fact] and result["usage"].endswith("/2,200 chars")
    # within the session the prompt stays frozen: the fact is not in it yet
    assert fact not in system_prompt(first) and system_prompt(second) == system_prompt(first)
    assert (home / "memories" / "MEMORY.md").read_text() == fact + "\n"

    server.script(reply_text("It is in ~/code/myapi."))
    assert cli("chat", "-q", "where is my project?") == 0
    renewed = system_prompt(server.last.body)
    assert f"MEMORY (your personal notes) [2% — {len(fact)}/2,200 chars]" in renewed
    assert fact in renewed
    capsys.readouterr()

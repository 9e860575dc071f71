"""Skills in the agent loop, against the fake Chat Completions server: the index in the
system prompt, then the model lists the skills, loads one and fetches its reference file."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_agent.builtin_plugins.agent.loop import Agent
from hermes_agent.testing import make_kernel
from hermes_agent.testing.fake_llm import FakeLLMServer, reply_text, reply_tool_call

from .conftest import write_skill


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        yield fake


def tool_results(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [json.loads(m["content"]) for m in messages if m["role"] == "tool"]


def test_the_model_lists_views_and_fetches_a_skill(home: Path, server: FakeLLMServer) -> None:
    folder = write_skill(home, "devops", "deploy-check", description="Verify a deployment",
                         body="1. Check health.\n2. See references/rollback.md if it fails.")
    (folder / "references").mkdir()
    (folder / "references" / "rollback.md").write_text("Run `make rollback`.\n")
    config = {"model": {"provider": "custom", "base_url": server.openai_base_url,
                        "default": "fake-model", "max_retries": 0},
              "sessions": {"auto_title": False}}  # the script answers the chat's requests only
    kernel = make_kernel(home, config=config, env={"HERMES_HOME": str(home)}, builtins=True)
    server.script(reply_tool_call("skills_list", {"category": "devops"}),
                  reply_tool_call("skill_view", {"name": "deploy-check"}),
                  reply_tool_call("skill_view", {"name": "deploy-check",
                                                 "path": "references/rollback.md"}),
                  reply_text("Deployed and checked."))
    turn = Agent(kernel).run_conversation("deploy the api and check it")
    assert turn.final_response == "Deployed and checked."

    posts = server.posts()
    system = posts[0].body["messages"][0]["content"]
    assert "## Skills (mandatory)" in system
    assert "  devops:\n    - deploy-check: Verify a deployment" in system
    assert "- git-commit-hygiene:" in system  # bundled, installed on first use
    tools = {t["function"]["name"] for t in posts[0].body["tools"]}
    assert {"skills_list", "skill_view", "skill_manage"} <= tools

    listed, viewed, reference = tool_results(posts[-1].body["messages"])
    assert [s["name"] for s in listed["skills"]] == ["deploy-check"]
    assert viewed["content"].startswith("1. Check health.")
    assert viewed["files"] == ["references/rollback.md"]
    assert reference["content"] == "Run `make rollback`.\n"
    assert all(p.body["messages"][0]["content"] == system for p in posts)  # prefix kept

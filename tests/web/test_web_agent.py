"""The agent, driven by the fake model server, searches with web_search, reads a page with
web_extract through the test backend over the fake web, and answers with what it read."""

from __future__ import annotations

import json
from typing import Any

from hermes_agent.builtin_plugins.agent.loop import Agent, AgentOptions
from hermes_agent.kits.fence import unfence
from hermes_agent.testing.fake_llm import FakeLLMServer, reply_text, reply_tool_call


def test_the_agent_searches_then_reads_a_page(kernel_with, web, tmp_path) -> None:
    page = web.page("1", "Tower facts\nThe tower is 330 metres tall.")
    with FakeLLMServer() as llm:
        kernel = kernel_with({"backend": "fakesearch", "allow_private_networks": True},
                             model={"provider": "custom", "base_url": llm.openai_base_url,
                                    "default": "m", "max_retries": 0},
                             toolsets=["web"])
        llm.script(reply_tool_call("web_search", {"query": "tower height", "limit": 1}, id="s"),
                   reply_tool_call("web_extract", {"urls": [page]}, id="e"),
                   reply_text("The tower is 330 metres tall."))
        result = Agent(kernel, AgentOptions(cwd=tmp_path)).run_conversation("How tall is the tower?")
        assert result.completed and result.final_response == "The tower is 330 metres tall."
        offered = {t["function"]["name"] for t in llm.posts()[0].body["tools"]}
        assert {"web_search", "web_extract"} <= offered
        tool_messages: dict[str, Any] = {m["tool_call_id"]: json.loads(unfence(m["content"]))
                                         for m in llm.posts()[2].body["messages"]
                                         if m["role"] == "tool"}
    assert tool_messages["s"]["data"]["web"][0]["url"] == page
    assert "330 metres" in tool_messages["e"]["results"][0]["content"]
    assert web.requests == ["GET /search?backend=fakesearch&q=tower+height&limit=1", "GET /page/1"]

"""Agent-level tools: they get the agent's state through the call's keyword arguments."""

from __future__ import annotations

import json

from hermes_agent.builtin_plugins.agent.loop import Agent
from hermes_agent.testing.fake_llm import reply_text, reply_tool_call


def test_a_resumed_session_finds_its_todo_list_again(kernel_for, server) -> None:
    todos = [{"id": "1", "content": "write the tests", "status": "in_progress"},
             {"id": "2", "content": "update the docs", "status": "pending"}]
    server.script(reply_tool_call("todo", {"todos": todos}), reply_text("planned"),
                  reply_tool_call("todo", {}), reply_text("still planned"))
    agent = Agent(kernel_for())
    agent.run_conversation("plan the work")
    agent.finalize("shutdown")
    resumed = Agent(kernel_for(), session_id=agent.session_id)  # a new process: a new kernel
    resumed.run_conversation("where were we?")
    result = json.loads(server.posts()[-1].body["messages"][-1]["content"])
    assert result["todos"] == todos and result["summary"]["total"] == 2

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


def test_delegate_task_toolsets_and_the_childs_own_budget(kernel_for, server) -> None:
    agent = Agent(kernel_for(delegation={"max_iterations": 1}))
    server.script(
        reply_tool_call("delegate_task", {"goal": "add numbers", "toolsets": ["calculator"]},
                        id="d1"),
        reply_tool_call("calculate", {"expression": "1+1"}),  # the child's one iteration
        reply_text("Child summary after its budget."),        # its last call, without tools
        reply_text("Done."))
    assert agent.run_conversation("delegate it").final_response == "Done."
    child_first, child_last = server.posts()[1].body, server.posts()[2].body
    assert sorted(t["function"]["name"] for t in child_first["tools"]) == [
        "calculate", "unit_convert"]
    assert "tools" not in child_last  # the child's budget (delegation.max_iterations) ran out
    parent_next = server.posts()[3].body
    assert len(parent_next["tools"]) == len(agent.tool_names)  # the parent's budget is its own
    summary = json.loads(parent_next["messages"][-1]["content"])
    assert summary == {**summary, "status": "completed", "api_calls": 2,
                       "summary": "Child summary after its budget."}

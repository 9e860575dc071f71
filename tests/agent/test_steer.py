"""``Agent.steer``: guidance from another thread reaches the running turn inside the next
tool result, between the out-of-band markers, and is stored with it; steer text that no tool
result carried is handed back (``take_steer``) instead of being lost."""

from __future__ import annotations

import threading

from hermes_agent.builtin_plugins.agent.inbox import STEER_CLOSE
from hermes_agent.builtin_plugins.agent.loop import Agent
from hermes_agent.testing.fake_llm import reply_text, reply_tool_call


def test_a_steer_from_another_thread_rides_on_the_next_tool_result(kernel_for, server) -> None:
    agent = Agent(kernel_for())
    asked = threading.Event()
    server.script(reply_tool_call("calculate", {"expression": "2+2"}, hold=asked),
                  reply_text("Four, briefly."))
    events: list[dict] = []
    worker = threading.Thread(target=lambda: events.append(
        agent.run_conversation("what is 2+2?", on_event=events.append).to_dict()))
    worker.start()
    assert agent.steer("keep it short") and not agent.steer("   ")
    asked.set()
    worker.join(20)
    assert events[-1]["final_response"] == "Four, briefly."
    tool = server.posts()[1].body["messages"][-1]
    assert tool["role"] == "tool" and '"result": 4' in tool["content"]
    assert tool["content"].endswith("keep it short\n" + STEER_CLOSE)
    assert "[OUT-OF-BAND USER MESSAGE" in tool["content"]
    assert [e["content"] for e in events if e.get("type") == "steered"] == ["keep it short"]
    stored = [m for m in agent.sessions.conversation(agent.session_id) if m["role"] == "tool"]
    assert stored[-1]["content"] == tool["content"]  # a resume replays what the model read
    assert agent.take_steer() is None
    system = server.posts()[0].body["messages"][0]["content"]
    assert "OUT-OF-BAND USER MESSAGE" in system  # the prompt says what the block is


def test_a_steer_no_tool_result_carried_is_handed_back(kernel_for, server) -> None:
    agent = Agent(kernel_for())
    server.script(reply_text("Plain."))
    agent.steer("first")
    agent.steer("second")
    assert agent.run_conversation("hi").final_response == "Plain."
    assert "OUT-OF-BAND" not in str(server.posts()[0].body["messages"][1:])
    assert agent.take_steer() == "first\nsecond"
    assert agent.take_steer() is None

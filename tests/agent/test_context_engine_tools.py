"""A context engine's own tools (``get_tool_schemas`` / ``handle_tool_call``) are offered to the
model with the agent's tools and their calls go to the agent's copy of the engine."""

from __future__ import annotations

import json
from typing import Any

from hermes_agent.api import ContextEngine
from hermes_agent.builtin_plugins.agent.loop import Agent, AgentOptions
from hermes_agent.testing.fake_llm import FakeLLMServer, reply_text, reply_tool_call


def schema(name: str) -> dict[str, Any]:
    return {"name": name, "description": f"the engine's {name}",
            "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}


class RecallEngine(ContextEngine):
    """Keeps nothing; offers a search over what it would have dropped, a failing tool and one
    whose name the calculator plugin already registers."""

    name = "recall-engine"

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any], str]] = []

    def update_from_response(self, usage: dict[str, Any]) -> None:
        self.last_prompt_tokens = usage["prompt_tokens"]

    def should_compress(self, prompt_tokens: int | None = None) -> bool:
        return False

    def compress(self, messages: list[dict[str, Any]], current_tokens: int | None = None,
                 focus_topic: str | None = None, force: bool = False,
                 memory_context: str = "") -> list[dict[str, Any]]:
        return messages

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return [schema("lcm_grep"), {"type": "function", "function": schema("lcm_broken")},
                schema("calculate")]

    def handle_tool_call(self, name: str, args: dict[str, Any],  # type: ignore[override]
                         session_id: str = "") -> str:  # no **kwargs: the host filters
        if name == "lcm_broken":
            raise RuntimeError("index missing")
        self.calls.append((name, args, session_id))
        return json.dumps({"matches": [f"found {args['q']}"]})


def test_the_engines_tools_are_offered_and_routed_to_it(kernel_for: Any, server: FakeLLMServer,
                                                       caplog: Any) -> None:
    kernel = kernel_for(toolsets=["calculator"], context={"engine": "recall-engine"})
    kernel.register_plugin(lambda ctx: ctx.register_context_engine(RecallEngine()), "recall_eng")
    with caplog.at_level("WARNING", logger="hermes_agent.agent.context"):
        agent = Agent(kernel, AgentOptions(stream=False))
    assert "'calculate' clashes with another tool" in caplog.text
    engine = agent.context
    assert isinstance(engine, RecallEngine)
    server.script(reply_tool_call("lcm_grep", {"q": "budget"}),
                  reply_tool_call("lcm_broken", {"q": "x"}),
                  reply_tool_call("calculate", {"expression": "2+3"}), reply_text("done"))
    turn = agent.run_conversation("what was the budget?")
    assert turn.completed and turn.final_response == "done"
    offered = [t["function"]["name"] for t in server.posts()[0].body["tools"]]
    assert sorted(offered) == ["calculate", "lcm_broken", "lcm_grep", "unit_convert"]
    assert engine.calls == [("lcm_grep", {"q": "budget"}, agent.session_id)]  # only its own
    results = [m["content"] for m in agent.history if m.get("role") == "tool"]
    assert json.loads(results[0]) == {"matches": ["found budget"]}
    assert "index missing" in results[1] and "error" in json.loads(results[1])
    assert "5" in results[2]  # the registered calculate ran, not the engine's


def test_an_excluded_engine_tool_is_not_offered(kernel_for: Any, server: FakeLLMServer) -> None:
    kernel = kernel_for(toolsets=[], context={"engine": "recall-engine"})
    kernel.register_plugin(lambda ctx: ctx.register_context_engine(RecallEngine()), "recall_eng")
    agent = Agent(kernel, AgentOptions(stream=False, exclude_tools=frozenset({"lcm_broken"})))
    assert [n for n in agent.tool_names if n.startswith("lcm")] == ["lcm_grep"]


def test_tools_added_between_turns_are_offered_and_the_engines_stay(
        kernel_for: Any, server: FakeLLMServer) -> None:
    from hermes_agent import ToolSpec

    kernel = kernel_for(toolsets=["calculator", "late"], context={"engine": "recall-engine"})
    kernel.register_plugin(lambda ctx: ctx.register_context_engine(RecallEngine()), "recall_eng")
    agent = Agent(kernel, AgentOptions(stream=False))
    server.script(reply_text("one"), reply_tool_call("late_tool", {}), reply_text("two"))
    agent.run_conversation("first")
    kernel.tools.add(ToolSpec("late_tool", "late", {"name": "late_tool", "parameters": {
        "type": "object", "properties": {}}}, lambda args, **kw: '"late result"', "late"))
    agent.run_conversation("second")
    first = sorted(t["function"]["name"] for t in server.posts()[0].body["tools"])
    second = sorted(t["function"]["name"] for t in server.posts()[1].body["tools"])
    assert second == sorted([*first, "late_tool"]) and "lcm_grep" in second
    assert server.posts()[2].body["messages"][-1]["content"] == '"late result"'
    kernel.tools.discard("late_tool")
    assert agent.refresh_tools() and "late_tool" not in agent.tool_names
    assert "lcm_grep" in agent.tool_names

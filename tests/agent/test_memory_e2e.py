"""The memory manager in the agent loop, against the fake Chat Completions server: the fence
in the request only, a hung prefetch, sync after the turn, tool routing, session moments."""

from __future__ import annotations

import json
import threading
from typing import Any

from hermes_agent.api import MemoryProvider
from hermes_agent.builtin_plugins.agent.loop import Agent, AgentOptions
from hermes_agent.testing.fake_llm import reply_text, reply_tool_call

RECALL = "user drinks green tea"


class Recorder:
    """Duck-typed: subclasses nothing, takes only some of the arguments."""

    def __init__(self, name: str = "recorder") -> None:
        self.name = name
        self.calls: list[tuple[Any, ...]] = []
        self.synced = threading.Event()

    def is_available(self):
        return True

    def initialize(self, session_id, platform, agent_context):
        self.calls.append(("initialize", session_id, platform, agent_context))

    def system_prompt_block(self):
        return "## Recorder memory\nRecall arrives in a fenced block."

    def get_tool_schemas(self):
        return [{"name": "recall_search", "description": "Search recalled facts.",
                 "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}]

    def handle_tool_call(self, tool_name, args, **kwargs):
        self.calls.append(("tool", tool_name, args, kwargs.get("session_id")))
        if args.get("q") == "boom":
            raise RuntimeError("index corrupt")
        return json.dumps({"facts": [RECALL]})

    def prefetch(self, query, *, session_id=""):
        return RECALL

    def queue_prefetch(self, query):
        self.calls.append(("queue_prefetch", query))

    def sync_turn(self, user_content, assistant_content, *, session_id="", messages=None):
        self.calls.append(("sync_turn", user_content, assistant_content, session_id,
                           len(messages or [])))
        self.synced.set()

    def on_turn_start(self, turn_number, message):
        self.calls.append(("turn_start", turn_number, message))

    def on_session_end(self, messages):
        self.calls.append(("session_end", len(messages)))

    def on_session_switch(self, new_session_id, *, parent_session_id="", reset=False):
        self.calls.append(("switch", new_session_id, parent_session_id, reset))

    def on_delegation(self, task, result, *, child_session_id=""):
        self.calls.append(("delegation", task, result, child_session_id))


def kernel_with(kernel_for: Any, provider: Any) -> Any:
    kernel = kernel_for(memory={"provider": provider.name, "prefetch_timeout": 2.0})
    kernel.register_plugin(lambda ctx: ctx.register_memory_provider(provider), provider.name)
    return kernel


def names(calls: list[tuple[Any, ...]]) -> list[str]:
    return [c[0] for c in calls]


def test_fence_reaches_the_request_only_and_sync_follows_the_turn(kernel_for, server) -> None:
    provider = Recorder()
    agent = Agent(kernel_with(kernel_for, provider))
    server.script(reply_text("Noted. <memory-context>leaked recall</memory-context>Bye.",
                             chunk_size=3),  # the tags arrive split across stream deltas
                  reply_text("ok"))
    events: list[dict[str, Any]] = []
    first = agent.run_conversation("what do I drink?", on_event=events.append)
    assert first.final_response == "Noted. Bye."
    request = server.posts()[0].body["messages"]
    system, user = request[0]["content"], request[1]["content"]
    assert user.startswith("what do I drink?\n\n<memory-context>") and RECALL in user
    assert "<memory-context>" not in system and RECALL not in system
    assert "## Recorder memory" in system  # the provider's static block, frozen at start
    stored = agent.sessions.conversation(agent.session_id)
    assert all("memory-context" not in json.dumps(m) and RECALL not in json.dumps(m)
               for m in agent.history + stored)
    streamed = "".join(e["text"] for e in events if e["type"] == "text_delta")
    assert streamed == "Noted. Bye."  # the fence is scrubbed from the stream too
    assert len([e for e in events if e["type"] == "text_delta"]) > 2
    assert provider.synced.wait(5)
    agent.memory.drain(5)
    assert ("sync_turn", "what do I drink?", "Noted. Bye.", agent.session_id, 2) in provider.calls
    assert ("queue_prefetch", "what do I drink?") in provider.calls
    assert provider.calls[0] == ("initialize", agent.session_id, "cli", "primary")
    assert ("turn_start", 1, "what do I drink?") in provider.calls

    agent.run_conversation("thanks")
    second = server.posts()[1].body["messages"]
    assert second[0]["content"] == system  # the cached prefix is unchanged
    # the earlier turn is sent as it was (fence included) so the cached prefix holds;
    # the new turn carries its own recall
    assert second[1]["content"] == request[1]["content"]
    assert RECALL in second[3]["content"] and second[3]["content"].startswith("thanks\n\n")
    assert all("memory-context" not in json.dumps(m)
               for m in agent.history + agent.sessions.conversation(agent.session_id))


def test_a_hung_prefetch_does_not_hold_the_turn(kernel_for, server) -> None:
    class Hung(Recorder):
        release = threading.Event()

        def prefetch(self, query, *, session_id=""):
            self.release.wait(60)
            return "too late"

    provider = Hung("hung")
    agent = Agent(kernel_with(kernel_for, provider))
    server.script(reply_text("answered"))
    try:
        turn = agent.run_conversation("hello")
        assert turn.completed and turn.final_response == "answered"
        assert not provider.release.is_set()  # the prefetch was left behind, still hung
        request = server.posts()[0].body["messages"]
        assert request[1]["content"] == "hello"  # no context from that provider
    finally:
        provider.release.set()


def test_provider_tools_are_offered_and_routed(kernel_for, server) -> None:
    provider = Recorder()
    agent = Agent(kernel_with(kernel_for, provider))
    server.script(reply_tool_call("recall_search", {"q": "tea"}, id="c1"),
                  reply_tool_call("recall_search", {"q": "boom"}, id="c2"),
                  reply_text("done"))
    turn = agent.run_conversation("search memory")
    assert turn.completed and turn.final_response == "done"
    offered = [t["function"]["name"] for t in server.posts()[0].body["tools"]]
    assert "recall_search" in offered
    results = [m["content"] for m in agent.history if m["role"] == "tool"]
    assert json.loads(results[0]) == {"facts": [RECALL]}
    assert "index corrupt" in json.loads(results[1])["error"]
    assert ("tool", "recall_search", {"q": "tea"}, agent.session_id) in provider.calls


class Legacy(MemoryProvider):
    """Subclasses the public base class (the compat path serves the same class)."""

    name = "legacy"  # type: ignore[assignment]

    def __init__(self) -> None:
        self.events: list[str] = []

    def is_available(self) -> bool:
        return True

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        self.events.append(f"init:{kwargs['hermes_home'] != ''}:{kwargs['agent_context']}")

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return []

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        raise RuntimeError("recall service down")

    def on_session_end(self, messages: list[dict[str, Any]]) -> None:
        self.events.append(f"end:{len(messages)}")

    def on_session_switch(self, new_session_id: str, **kwargs: Any) -> None:
        self.events.append(f"switch:{kwargs['reset']}")


def test_session_moments_and_a_raising_prefetch(kernel_for, server) -> None:
    provider = Legacy()
    agent = Agent(kernel_with(kernel_for, provider))
    server.script(reply_text("first"), reply_text("second"))
    assert agent.run_conversation("hi").final_response == "first"  # prefetch raised: skipped
    agent.new_session()
    agent.run_conversation("again")
    agent.finalize("shutdown")
    assert provider.events == ["init:True:primary", "end:2", "switch:True", "end:2"]


def test_original_base_class_path_and_memory_writes(kernel_for, server) -> None:
    kernel_for()  # a kernel with the compat plugin serves agent.memory_provider from here on
    from agent.memory_provider import MemoryProvider as Original

    class Mirror(Original):
        name = "mirror"

        def __init__(self):
            self.writes = []

        def is_available(self):
            return True

        def initialize(self, session_id, **kwargs):
            pass

        def get_tool_schemas(self):
            return []

        def on_memory_write(self, action, target, content, metadata=None):
            self.writes.append((action, target, content, metadata))

    provider = Mirror()
    assert isinstance(provider, MemoryProvider)
    kernel = kernel_with(kernel_for, provider)
    agent = Agent(kernel)
    server.script(reply_text("ok"))
    agent.run_conversation("remember that I like tea")
    kernel.hooks.fire("on_memory_write", action="add", target="user", content="likes tea",
                      metadata=None, session_id=agent.session_id, platform="cli")
    agent.memory.drain(5)
    assert provider.writes == [("add", "user", "likes tea", None)]


def test_delegation_reaches_the_parent_provider(kernel_for, server) -> None:
    provider = Recorder()
    agent = Agent(kernel_with(kernel_for, provider))
    server.script(reply_tool_call("delegate_task", {"goal": "count to 3"}, id="d1"),
                  reply_text("1 2 3"),  # the child
                  reply_text("the child counted"))
    agent.run_conversation("delegate counting")
    delegations = [c for c in provider.calls if c[0] == "delegation"]
    assert len(delegations) == 1 and delegations[0][1:3] == ("count to 3", "1 2 3")
    assert [c for c in provider.calls if c[0] == "initialize"] == [provider.calls[0]]


def test_the_reserved_builtin_name_and_a_missing_provider(kernel_for, server, caplog) -> None:
    impostor = Recorder("builtin")
    kernel = kernel_for()
    kernel.register_plugin(lambda ctx: ctx.register_memory_provider(impostor), "impostor")
    assert Agent(kernel).memory is None
    assert "'builtin' of plugin 'impostor' refused" in caplog.text
    agent = Agent(kernel_for(memory={"provider": "nowhere"}))
    assert agent.memory is None and "'nowhere'" in caplog.text  # the prompt reports it too


def test_subagents_have_no_memory_manager(kernel_for) -> None:
    provider = Recorder()
    child = Agent(kernel_with(kernel_for, provider), AgentOptions(depth=1))
    assert child.memory is None and "recall_search" not in child.tool_names


def test_provider_tools_follow_the_memory_toolset(kernel_for) -> None:
    provider = Recorder()
    kernel = kernel_with(kernel_for, provider)
    assert "recall_search" not in Agent(kernel, AgentOptions(toolsets=["file"])).tool_names
    assert "recall_search" in Agent(kernel, AgentOptions(toolsets=["file", "memory"])).tool_names


def test_an_external_providers_block_is_in_the_system_prompt_once(kernel_for, server) -> None:
    """The block is the memory_blocks layer (docs/system-prompt.md), not added again after."""
    provider = Recorder()
    agent = Agent(kernel_with(kernel_for, provider))
    server.script(reply_text("ok"))
    agent.run_conversation("hi")
    system = server.posts()[0].body["messages"][0]["content"]
    assert system.count("## Recorder memory") == 1
    assert agent.rebuild_system_prompt().count("## Recorder memory") == 1  # after compression

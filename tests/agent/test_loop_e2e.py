"""End-to-end tests of the agent loop against the fake Chat Completions server: real HTTP, the
openai SDK, the builtin core tools, the seed calculator plugin and a SQLite session store."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

from hermes_agent.builtin_plugins.agent.loop import Agent, AgentOptions
from hermes_agent.testing import HookRecorder
from hermes_agent.testing.fake_llm import reply_text, reply_tool_call, reply_tool_calls


def tool_results(body: dict[str, Any]) -> dict[str, str]:
    return {m["tool_call_id"]: m["content"] for m in body["messages"] if m["role"] == "tool"}


def test_multi_turn_session_with_file_tools_terminal_calculator_parallel_and_blocked(
        kernel_for, server, workdir: Path) -> None:
    kernel = kernel_for()

    def block_rm(ctx: Any) -> None:
        def guard(tool_name: str, args: dict[str, Any], **kwargs: Any) -> Any:
            if tool_name == "terminal" and "rm " in args.get("command", ""):
                return {"action": "block", "message": "deleting files is not allowed here"}
            return None
        ctx.register_hook("pre_tool_call", guard)

    kernel.register_plugin(block_rm, "guard")
    agent = Agent(kernel, AgentOptions(cwd=workdir))
    notes = workdir / "notes.txt"
    server.script(
        reply_tool_call("write_file", {"path": str(notes), "content": "alpha\nbeta\n"}, id="w1"),
        reply_tool_calls(("read_file", {"path": str(notes)}),
                         ("search_files", {"pattern": "beta", "path": str(workdir)}),
                         ("calculate", {"expression": "6*7"})),
        reply_text("Wrote notes.txt; 6*7 is 42."),
        reply_tool_calls(("terminal", {"command": "echo hello-from-shell"}),
                         ("terminal", {"command": "rm -f notes.txt"})),
        reply_text("Done."),
    )
    first = agent.run_conversation("write notes and compute 6*7")
    assert first.completed and first.final_response == "Wrote notes.txt; 6*7 is 42."
    assert notes.read_text() == "alpha\nbeta\n"
    posts = server.posts()
    third = posts[2].body
    results = list(tool_results(third).values())
    assert "alpha" in results[1] and "beta" in results[2] and '"result": 42' in results[3]
    ids = [m["tool_call_id"] for m in third["messages"] if m["role"] == "tool"]
    calls = [c["id"] for m in third["messages"] if m.get("tool_calls") for c in m["tool_calls"]]
    assert ids == calls  # results in call order, parallel batch included

    second = agent.run_conversation("run the shell commands")
    assert second.completed and second.final_response == "Done."
    last = server.posts()[-1].body
    shell = [m["content"] for m in last["messages"] if m["role"] == "tool"][-2:]
    assert "hello-from-shell" in shell[0]
    assert json.loads(shell[1])["error"] == "deleting files is not allowed here"
    assert notes.exists()
    stored = agent.sessions.conversation(agent.session_id)
    assert [m["role"] for m in stored] == [
        "user", "assistant", "tool", "assistant", "tool", "tool", "tool", "assistant",
        "user", "assistant", "tool", "tool", "assistant"]
    session = agent.sessions.get(agent.session_id)
    assert session["input_tokens"] > 0 and session["output_tokens"] > 0


def test_pre_llm_call_context_is_sent_but_never_stored(kernel_for, server) -> None:
    kernel = kernel_for()
    kernel.register_plugin(lambda ctx: ctx.register_hook(
        "pre_llm_call", lambda **kw: {"context": "RECALLED: user likes tea"}), "recall")
    agent = Agent(kernel)
    server.script(reply_tool_call("calculate", {"expression": "1+1"}), reply_text("two"),
                  reply_text("ok"))
    agent.run_conversation("what is 1+1?")
    agent.run_conversation("thanks")
    bodies = [p.body for p in server.posts()]
    assert bodies[0]["messages"][1]["content"] == "what is 1+1?\n\nRECALLED: user likes tea"
    assert bodies[1]["messages"][1]["content"].endswith("RECALLED: user likes tea")
    # next turn: the earlier message is sent as it was (the prompt cache holds), the new one
    # carries its own context
    assert bodies[2]["messages"][1]["content"] == "what is 1+1?\n\nRECALLED: user likes tea"
    assert bodies[2]["messages"][-1]["content"] == "thanks\n\nRECALLED: user likes tea"
    assert wire(bodies[2]).startswith(wire(bodies[1])[:-2])
    stored = agent.sessions.conversation(agent.session_id)
    assert all("RECALLED" not in (m.get("content") or "") for m in stored + agent.history)
    # a new session starts without it
    agent.new_session()
    server.script(reply_text("fresh"))
    agent.run_conversation("hello")
    assert [m["content"] for m in server.last.body["messages"][1:]] == [
        "hello\n\nRECALLED: user likes tea"]


def wire(body: dict) -> str:
    """The request as a provider's prompt cache sees it: messages in order."""
    return json.dumps(body["messages"], ensure_ascii=False)


def test_request_only_context_is_bounded(kernel_for, server) -> None:
    big = "R" * 7000
    kernel = kernel_for()
    kernel.register_plugin(lambda ctx: ctx.register_hook(
        "pre_llm_call", lambda **kw: {"context": big}), "recall")
    agent = Agent(kernel)
    server.script(reply_text("a"), reply_text("b"), reply_text("c"), reply_text("d"))
    for text in ("one", "two", "three", "four"):
        agent.run_conversation(text)
    users = [[m["content"] for m in p.body["messages"] if m["role"] == "user"]
             for p in server.posts()]
    assert users[1] == [f"one\n\n{big}", f"two\n\n{big}"]  # 14,000 chars kept
    assert users[2] == ["one", "two", f"three\n\n{big}"]  # 21,000 > 16,000: dropped at once
    assert users[3] == ["one", "two", f"three\n\n{big}", f"four\n\n{big}"]  # regrows


def test_system_prompt_is_frozen_and_byte_identical_across_turns(kernel_for, server) -> None:
    agent = Agent(kernel_for())
    server.script(reply_text("a"), reply_tool_call("calculate", {"expression": "2"}),
                  reply_text("b"), reply_text("c"))
    for text in ("one", "two", "three"):
        agent.run_conversation(text)
    systems = {p.body["messages"][0]["content"] for p in server.posts()}
    assert len(systems) == 1
    assert agent.sessions.system_prompt(agent.session_id) == systems.pop()
    bodies = [json.dumps(p.body["messages"]) for p in server.posts()]
    for before, after in zip(bodies, bodies[1:]):  # every request extends the previous one
        assert after.startswith(before[:-1])


def test_hooks_fire_in_order_with_their_payloads(kernel_for, server) -> None:
    kernel = kernel_for()
    recorder = HookRecorder(kernel)
    agent = Agent(kernel)
    server.script(reply_tool_call("calculate", {"expression": "3*3"}, id="c1"), reply_text("9"))
    result = agent.run_conversation("3*3?")
    agent.finalize("shutdown")
    assert recorder.names() == [
        "on_session_start", "pre_llm_call", "pre_api_request", "post_api_request",
        "pre_tool_call", "post_tool_call", "transform_tool_result",
        "pre_api_request", "post_api_request", "transform_llm_output", "post_llm_call",
        "on_session_end", "on_session_finalize"]
    sid = agent.session_id
    assert recorder.payloads("on_session_start") == [
        {"session_id": sid, "model": "fake-model", "platform": "cli"}]
    pre = recorder.payloads("pre_llm_call")[0]
    assert pre["user_message"] == "3*3?" and pre["is_first_turn"] is True
    assert pre["turn_id"] == result.turn_id and pre["task_id"] == result.task_id
    post_tool = recorder.payloads("post_tool_call")[0]
    assert post_tool["tool_name"] == "calculate" and post_tool["status"] == "ok"
    assert post_tool["tool_call_id"] == "c1" and post_tool["duration_ms"] >= 0
    assert json.loads(post_tool["result"])["result"] == 9
    assert recorder.payloads("post_llm_call")[0]["assistant_response"] == "9"
    end = recorder.payloads("on_session_end")[0]
    assert end["completed"] is True and end["interrupted"] is False
    assert end["turn_id"] == result.turn_id
    assert recorder.payloads("on_session_finalize")[0]["reason"] == "shutdown"


def test_new_session_finalizes_then_resets(kernel_for, server) -> None:
    kernel = kernel_for()
    recorder = HookRecorder(kernel, ["on_session_finalize", "on_session_reset",
                                     "on_session_start"])
    agent = Agent(kernel)
    server.script(reply_text("hi"), reply_text("again"))
    agent.run_conversation("hello")
    old = agent.session_id
    new = agent.new_session()
    agent.run_conversation("hello again")
    assert recorder.names() == ["on_session_start", "on_session_finalize", "on_session_reset",
                                "on_session_start"]
    fin, reset = recorder.payloads("on_session_finalize")[0], recorder.payloads("on_session_reset")[0]
    assert fin["session_id"] == old and fin["new_session_id"] == new
    assert reset["session_id"] == new and reset["old_session_id"] == old
    assert server.posts()[1].body["messages"][1]["content"] == "hello again"


def test_resumed_session_replays_history_without_session_start(kernel_for, server) -> None:
    kernel = kernel_for()
    agent = Agent(kernel)
    server.script(reply_tool_call("calculate", {"expression": "5+5"}), reply_text("10"),
                  reply_text("still 10"))
    agent.run_conversation("5+5?")
    agent.finalize("shutdown")
    first_request = server.posts()[1].body["messages"]
    recorder = HookRecorder(kernel, ["on_session_start", "pre_llm_call"])
    resumed = Agent(kernel, session_id=agent.session_id)
    resumed.run_conversation("and now?")
    messages = server.posts()[-1].body["messages"]
    assert messages[:len(first_request)] == first_request
    assert recorder.names() == ["pre_llm_call"]
    assert recorder.payloads("pre_llm_call")[0]["is_first_turn"] is False


def test_resuming_a_missing_session_is_a_session_store_error(kernel_for) -> None:
    import pytest

    from hermes_agent.api import SessionStoreError

    with pytest.raises(SessionStoreError, match="no session 'nope'.*hermes sessions list"):
        Agent(kernel_for(), session_id="nope")


def test_malformed_arguments_and_unknown_tool_become_recoverable_errors(kernel_for, server) -> None:
    from hermes_agent.testing.fake_llm import FakeToolCall, Reply

    agent = Agent(kernel_for())
    bad = Reply(tool_calls=[FakeToolCall("calculate", {}, "b1"),
                            FakeToolCall("no_such_tool", {"x": 1}, "b2")])
    server.script(bad, reply_text("recovered"))
    # the first call's arguments arrive as a JSON string, not an object
    original = server._state.replies[0].tool_calls[0]
    original.arguments = "{not json"  # type: ignore[assignment]
    result = agent.run_conversation("go")
    assert result.completed and result.final_response == "recovered"
    results = tool_results(server.posts()[1].body)
    assert "must be a JSON object" in json.loads(results["b1"])["error"]
    assert "Unknown tool: 'no_such_tool'" in json.loads(results["b2"])["error"]


def test_parallel_read_only_calls_overlap_and_keep_call_order(kernel_for, server) -> None:
    kernel = kernel_for(agent={"parallel_tools": ["slow_lookup"]})

    # all four must be running at once to pass the barrier: one after another, the first
    # would wait out its timeout alone (proof by overlap, not by wall-clock time)
    together = threading.Barrier(4, timeout=10)

    def plugin(ctx: Any) -> None:
        def slow(args: dict[str, Any], **kwargs: Any) -> str:
            together.wait()
            return json.dumps({"key": args["key"]})
        ctx.register_tool("slow_lookup", "lookup", {"name": "slow_lookup", "description": "x",
                          "parameters": {"type": "object", "properties": {}}}, slow)

    kernel.register_plugin(plugin, "lookup")
    agent = Agent(kernel)
    server.script(reply_tool_calls(*[("slow_lookup", {"key": k}) for k in "abcd"]),
                  reply_text("done"))
    agent.run_conversation("look up four keys")
    keys = [json.loads(v)["key"] for v in tool_results(server.posts()[1].body).values()]
    assert keys == ["a", "b", "c", "d"]


def test_provider_failure_gives_clear_error_and_session_stays_resumable(kernel_for, server) -> None:
    from hermes_agent.testing.fake_llm import reply_error

    kernel = kernel_for()
    agent = Agent(kernel)
    server.script(reply_error(401, "invalid api key"), reply_text("works now"))
    failed = agent.run_conversation("hello?")
    assert failed.failed and not failed.completed
    assert "HTTP 401" in failed.error and "Fix:" in failed.error
    resumed = Agent(kernel, session_id=agent.session_id)
    ok = resumed.run_conversation("hello again?")
    assert ok.completed and ok.final_response == "works now"
    sent = server.posts()[-1].body["messages"]
    assert [m["role"] for m in sent] == ["system", "user"]
    assert sent[1]["content"] == "hello?\n\nhello again?"



def test_stream_broken_after_text_keeps_the_shown_part_and_the_session_resumes(
        kernel_for, server) -> None:
    from hermes_agent.testing.fake_llm import reply_cut

    kernel = kernel_for()
    agent = Agent(kernel, AgentOptions(stream=True))
    server.script(reply_cut("The answer is forty-two, because", after=4), reply_text("again: 42"))
    shown: list[str] = []
    broken = agent.run_conversation("why?", on_event=lambda e: shown.append(e.get("text", ""))
                                    if e["type"] == "text_delta" else None)
    assert broken.failed and "not retried" in broken.error and "Fix:" in broken.error
    kept = "".join(shown)
    assert kept and "The answer is forty-two, because".startswith(kept)
    stored = kernel.slots.active("session_store", kernel.config)
    rows = stored.get_messages(agent.session_id)
    assert [(r["role"], r["content"]) for r in rows] == [("user", "why?"), ("assistant", kept)]
    assert len(server.posts()) == 1  # not retried, not sent to a fallback
    again = Agent(kernel, session_id=agent.session_id).run_conversation("and?")
    assert again.completed and again.final_response == "again: 42"

def test_iteration_budget_ends_with_a_call_without_tools(kernel_for, server) -> None:
    agent = Agent(kernel_for(), AgentOptions(max_iterations=2))
    server.script(reply_tool_call("calculate", {"expression": "1"}),
                  reply_tool_call("calculate", {"expression": "2"}),
                  reply_text("summary"))
    result = agent.run_conversation("loop forever")
    assert result.completed and result.exit_reason == "budget_exhausted"
    assert result.final_response == "summary" and result.api_calls == 3
    last = server.posts()[-1].body
    assert "tools" not in last and "tool-calling step" in last["messages"][-1]["content"]


def test_invalid_json_arguments_are_reported_without_running_the_tool(kernel_for) -> None:
    from hermes_agent.api import ToolCallContext
    from hermes_agent.builtin_plugins.agent.tool_exec import ToolExecutor, ToolTurn
    from hermes_agent.api import ToolCall

    kernel = kernel_for()
    recorder = HookRecorder(kernel, ["pre_tool_call", "post_tool_call"])
    ctx = ToolTurn(ToolCallContext("s", "t", "s:t:1", platform="cli"),
                   allowed=frozenset({"calculate"}))
    outcome = ToolExecutor(kernel).run_one(ToolCall("x1", "calculate", '{"expression": '), ctx)
    assert outcome.status == "error" and outcome.error_type == "invalid_arguments"
    assert "not valid JSON" in json.loads(outcome.result)["error"]
    assert recorder.names() == ["post_tool_call"]  # never reached the guard or the handler
    assert recorder.payloads("post_tool_call")[0]["error_type"] == "invalid_arguments"


def test_delegate_task_runs_a_subagent_with_its_own_session_and_tools(kernel_for, server) -> None:
    kernel = kernel_for()
    recorder = HookRecorder(kernel, ["subagent_start", "subagent_stop", "on_session_start"])
    agent = Agent(kernel)
    assert "delegate_task" in agent.tool_names
    server.script(
        reply_tool_call("delegate_task", {"goal": "compute 2+2", "context": "use calculate"},
                        id="d1"),
        reply_tool_call("calculate", {"expression": "2+2"}),  # the child's first call
        reply_text("The child computed 4."),                   # the child's summary
        reply_text("Your subagent says 4."))
    result = agent.run_conversation("delegate 2+2")
    assert result.final_response == "Your subagent says 4."
    child_request = server.posts()[1].body
    child_tools = {t["function"]["name"] for t in child_request["tools"]}
    assert "calculate" in child_tools and not child_tools & {"delegate_task", "clarify"}
    assert "compute 2+2" in child_request["messages"][-1]["content"]
    summary = json.loads(tool_results(server.posts()[3].body)["d1"])
    assert summary["status"] == "completed" and summary["summary"] == "The child computed 4."
    child_id = summary["session_id"]
    assert agent.sessions.get(child_id)["parent_session_id"] == agent.session_id
    start, stop = recorder.payloads("subagent_start")[0], recorder.payloads("subagent_stop")[0]
    assert start["child_session_id"] == child_id and start["child_goal"] == "compute 2+2"
    assert stop["child_status"] == "completed" and stop["duration_ms"] > 0
    assert stop["parent_session_id"] == agent.session_id
    assert [p["platform"] for p in recorder.payloads("on_session_start")] == ["cli", "subagent"]


def _interrupt_after(agent: Agent, seconds: float) -> None:
    import threading

    threading.Timer(seconds, agent.interrupt).start()


def test_interrupt_stops_a_streaming_answer_and_history_stays_valid(kernel_for, server) -> None:
    from hermes_agent.testing.fake_llm import reply_stall

    kernel = kernel_for()
    recorder = HookRecorder(kernel, ["on_session_end", "post_llm_call"])
    agent = Agent(kernel)
    server.script(reply_stall("Partial answer that never finishes", stall=30),
                  reply_text("fresh answer"))
    seen: list[float] = []

    def on_event(event: dict[str, Any]) -> None:
        if event["type"] == "text_delta" and not seen:  # Ctrl-C once the answer shows
            seen.append(time.perf_counter())
            _interrupt_after(agent, 0.2)

    result = agent.run_conversation("tell me a long story", on_event=on_event)
    assert seen and time.perf_counter() - seen[0] < 2  # not the 30 s stall
    assert result.interrupted and not result.completed
    assert recorder.names() == ["on_session_end"]  # no post_llm_call for an interrupted turn
    assert recorder.payloads("on_session_end")[0]["interrupted"] is True
    stored = agent.sessions.conversation(agent.session_id)
    assert [m["role"] for m in stored] == ["user", "assistant"]  # the part already shown
    assert stored[1]["content"].startswith("Part")
    nxt = agent.run_conversation("shorter please")
    assert nxt.completed and nxt.final_response == "fresh answer"


def test_interrupt_stops_a_running_tool_and_cancels_the_rest(kernel_for, server) -> None:
    agent = Agent(kernel_for())
    server.script(reply_tool_calls(("terminal", {"command": "sleep 30"}),
                                   ("calculate", {"expression": "1"})),
                  reply_text("after the interrupt"))
    started: list[float] = []

    def on_event(event: dict[str, Any]) -> None:
        if event["type"] == "tool_start" and event["name"] == "terminal":
            started.append(time.perf_counter())
            _interrupt_after(agent, 0.5)

    result = agent.run_conversation("run a slow command", on_event=on_event)
    assert started and time.perf_counter() - started[0] < 4  # not the 30 s sleep
    assert result.interrupted
    stored = agent.sessions.conversation(agent.session_id)
    assert [m["role"] for m in stored] == ["user", "assistant", "tool", "tool"]
    assert "cancelled" in stored[3]["content"]
    nxt = agent.run_conversation("ok, never mind")
    assert nxt.completed
    sent = server.posts()[-1].body["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool", "tool", "user"]

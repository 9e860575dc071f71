"""Compression in the agent loop, against fake model servers: the main model on one, the
auxiliary ``compression`` model (the summariser) on another, so each is scripted alone."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_agent.builtin_plugins.agent.chat.slash import ChatState, run_slash
from hermes_agent.builtin_plugins.agent.loop import Agent, AgentOptions
from hermes_agent.testing.fake_llm import FakeLLMServer, reply_error, reply_text, reply_tool_call

FILLER = "the quick brown fox jumps over the lazy dog " * 12  # ~540 characters, ~135 tokens
SUMMARY_MARK = "[Summary of the earlier conversation"


@pytest.fixture
def summariser() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        yield fake


@pytest.fixture
def agent_for(kernel_for: Any, server: FakeLLMServer, summariser: FakeLLMServer):  # type: ignore[no-untyped-def]
    """``agent_for(**config)``: an agent whose model has a 4,000-token window (compression
    at 2,000) and whose summariser is the second server."""

    def build(**extra: Any) -> Agent:
        server.default_reply = reply_text("Noted.")
        model = {"provider": "custom", "base_url": server.openai_base_url,
                 "default": "fake-model", "max_retries": 0, "context_length": 4000}
        settings = {"toolsets": [], **extra}
        kernel = kernel_for(model=model, auxiliary={"compression": {
            "provider": "custom", "base_url": summariser.openai_base_url, "model": "summ"}},
            **settings)
        return Agent(kernel, AgentOptions(stream=False, cwd=kernel.home))

    return build


def talk(agent: Agent, turns: int, events: list[dict[str, Any]] | None = None,
         start: int = 0) -> None:
    for index in range(start, start + turns):
        turn = agent.run_conversation(f"turn {index}: {FILLER}",
                                      on_event=events.append if events is not None else None)
        assert turn.completed, turn.error


def until_compressed(agent: Agent, events: list[dict[str, Any]], limit: int = 40) -> int:
    """Talk until a compression happens; returns the turn index it happened in."""
    seen = len([e for e in events if e["type"] == "compressed"])
    for index in range(limit):
        talk(agent, 1, events, start=index + 1000 * seen)
        if len([e for e in events if e["type"] == "compressed"]) > seen:
            return index
    raise AssertionError("no compression within the turn limit")


def summary_requests(summariser: FakeLLMServer) -> list[list[dict[str, Any]]]:
    return [r.body["messages"] for r in summariser.posts()]


def test_a_long_session_is_compressed_into_a_numbered_child_session(
        agent_for: Any, server: FakeLLMServer, summariser: FakeLLMServer, home: Path) -> None:
    summariser.script(reply_text("## Goal\nFinish the trip plan.\n## Critical Context\nBudget 900 EUR."))
    agent = agent_for()
    events: list[dict[str, Any]] = []
    talk(agent, 1, events)
    first = agent.session_id
    agent.sessions.set_title(first, "Trip plan")
    memories = home / "memories"
    memories.mkdir(exist_ok=True)
    (memories / "MEMORY.md").write_text("User prefers trains over planes.\n")
    assert "trains over planes" not in agent.system_prompt  # frozen at the session's start

    until_compressed(agent, events)
    second = agent.session_id
    assert second != first
    old, new = agent.sessions.get(first), agent.sessions.get(second)
    assert old["end_reason"] == "compression" and old["ended_at"]
    assert new["parent_session_id"] == first and new["title"] == "Trip plan #2"
    # the rebuilt prompt reads memory as it is now, is stored, and leads the next request
    assert "trains over planes" in agent.system_prompt
    assert new["system_prompt"] == agent.system_prompt
    assert "trains over planes" not in old["system_prompt"]
    request = server.posts()[-1].body["messages"]
    assert request[0]["content"] == agent.system_prompt
    sent = json.dumps(request)
    assert "Budget 900 EUR" in sent and "turn 0:" in sent  # summary, and the kept head
    assert "turn 5:" not in sent  # a middle turn, now summarised
    # the summariser got the template and the middle turns
    prompt = summary_requests(summariser)[0]
    assert "## Constraints & Preferences" in prompt[0]["content"]
    assert "turn 5:" in prompt[1]["content"]
    # the new session's stored transcript is the compressed one, the old keeps everything
    stored = agent.sessions.conversation(second)
    assert stored[3]["content"].startswith(SUMMARY_MARK)
    assert len(agent.sessions.conversation(first)) > len(stored)
    compressed = next(e for e in events if e["type"] == "compressed")
    assert compressed["parent_session_id"] == first and compressed["session_id"] == second

    summariser.script(reply_text("## Goal\nStill the trip plan."))
    until_compressed(agent, events)
    third = agent.sessions.get(agent.session_id)
    assert third["title"] == "Trip plan #3" and third["parent_session_id"] == second
    assert agent.sessions.store.get_compression_tip(first) == agent.session_id
    # resuming any session of the chain continues its newest one, compressed
    resumed = Agent(agent.kernel, AgentOptions(stream=False), session_id=first)
    assert resumed.session_id == agent.session_id and resumed.history == agent.history
    assert resumed.system_prompt == agent.system_prompt



def test_the_trigger_counts_the_last_answer_and_tool_call_arguments(
        agent_for: Any, server: FakeLLMServer, summariser: FakeLLMServer) -> None:
    """The size checked before a call is every message that call sends: the model's latest
    answer and its tool calls' arguments too. So compression happens before the request that
    would cross the threshold, not one turn after it."""
    summariser.default_reply = reply_text("## Goal\nKeep going.")
    agent = agent_for()
    threshold = agent.context.threshold_tokens
    events: list[dict[str, Any]] = []
    big = "lorem ipsum dolor sit amet " * 45  # ~1,200 characters, ~300 tokens
    for index in range(12):
        server.script(reply_tool_call("lookup", {"notes": f"{index} {big}"}),
                      reply_text(f"answer {index}: {big}"))
        turn = agent.run_conversation(f"q{index}", on_event=events.append)
        assert turn.completed, turn.error
    sent = [e["usage"]["prompt_tokens"] for e in events if e["type"] == "assistant"]
    assert any(e["type"] == "compressed" for e in events)
    assert max(sent) < threshold + 100, (threshold, sent)  # ~300 over before the fix


def test_a_fact_from_the_first_summary_is_carried_into_the_second(
        agent_for: Any, summariser: FakeLLMServer) -> None:
    summariser.script(reply_text("## Critical Context\nThe deploy key lives in vault slot 7."),
                      reply_text("## Critical Context\nThe deploy key lives in vault slot 7.\n"
                                 "Staging is on port 8443."))
    agent = agent_for()
    events: list[dict[str, Any]] = []
    until_compressed(agent, events)
    until_compressed(agent, events)
    first_prompt, second_prompt = summary_requests(summariser)
    assert "PREVIOUS SUMMARY" not in first_prompt[0]["content"]
    assert "PREVIOUS SUMMARY" in second_prompt[0]["content"]
    assert "vault slot 7" in second_prompt[0]["content"]  # handed back to be kept
    assert SUMMARY_MARK not in second_prompt[1]["content"]  # not re-read as a turn
    summaries = [m for m in agent.history if m["content"].startswith(SUMMARY_MARK)]
    assert len(summaries) == 1 and "vault slot 7" in summaries[0]["content"]
    assert agent.context.compression_count == 2


@pytest.mark.parametrize("failure", ["error", "timeout"])
def test_a_failing_summariser_leaves_the_session_whole_and_usable(
        agent_for: Any, server: FakeLLMServer, summariser: FakeLLMServer, failure: str) -> None:
    if failure == "error":
        summariser.script(reply_error(500, "summariser down"))
        agent = agent_for()
    else:
        summariser.script(reply_text("too slow", delay=30))
        agent = agent_for()
        agent.kernel.config.data["auxiliary"]["compression"]["timeout"] = 0.5
    events: list[dict[str, Any]] = []
    for index in range(40):
        before = list(agent.history)
        talk(agent, 1, events, start=index)
        if summariser.posts():
            break
    warnings = [e for e in events if e["type"] == "notice"]
    assert warnings and "did not run" in warnings[0]["message"]
    assert "continues uncompressed" in warnings[0]["message"]
    assert not [e for e in events if e["type"] == "compressed"]
    assert agent.history[:len(before)] == before  # nothing lost
    assert agent.history[-1]["content"] == "Noted."  # the turn itself was answered
    stored = agent.sessions.conversation(agent.session_id)
    assert len(stored) == len(agent.history)
    assert agent.sessions.get(agent.session_id)["end_reason"] is None
    # automatic attempts pause after a failure; the next turn goes straight to the model
    calls = len(summariser.posts())
    talk(agent, 1, events, start=500)
    assert len(summariser.posts()) == calls
    # /compress still forces one, and it works once the summariser is back
    summariser.script(reply_text("## Goal\nRecovered."))
    assert agent.compress("") is True
    assert agent.history[3]["content"].startswith(SUMMARY_MARK)


def test_slash_compress_passes_the_focus_and_forces_compression(
        agent_for: Any, summariser: FakeLLMServer) -> None:
    summariser.script(reply_text("## Goal\nMigrate the database."))
    agent = agent_for()
    talk(agent, 8)
    assert not summariser.posts()  # below the threshold
    state = ChatState(agent=agent, kernel=agent.kernel)
    before = agent.session_id
    out = run_slash(state, "/compress the database migration")
    assert out.startswith("Compressed ") and agent.session_id in out
    assert agent.sessions.get(agent.session_id)["parent_session_id"] == before
    system = summary_requests(summariser)[0][0]["content"]
    assert "focus on: the database migration" in system
    assert run_slash(ChatState(agent=agent_for(), kernel=agent.kernel),
                     "/compress") == "Nothing to compress yet."


class NotesProvider:
    """A memory provider that adds to the summary prompt and records session switches."""

    name = "notes"

    def __init__(self) -> None:
        self.switches: list[tuple[str, dict[str, Any]]] = []

    def is_available(self) -> bool:
        return True

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        pass

    def on_pre_compress(self, messages: list[dict[str, Any]]) -> str:
        return f"The user is planning a wedding ({len(messages)} messages seen)."

    def on_session_switch(self, new_session_id: str, **kwargs: Any) -> None:
        self.switches.append((new_session_id, kwargs))


def test_memory_providers_feed_the_summary_and_hear_of_the_split(
        agent_for: Any, summariser: FakeLLMServer) -> None:
    summariser.script(reply_text("## Goal\nPlan the wedding."))
    agent = agent_for(memory={"provider": "notes"})
    provider = NotesProvider()
    agent.kernel.register_plugin(lambda ctx: ctx.register_memory_provider(provider), "notes")
    agent = Agent(agent.kernel, AgentOptions(stream=False))
    events: list[dict[str, Any]] = []
    talk(agent, 1, events)
    first = agent.session_id
    until_compressed(agent, events)
    system = summary_requests(summariser)[0][0]["content"]
    assert "planning a wedding" in system
    assert provider.switches == [(agent.session_id, {
        "parent_session_id": first, "reset": False, "reason": "compression"})]


def test_the_compressor_clears_old_tool_output_and_keeps_the_tail_as_it_was(
        agent_for: Any, summariser: FakeLLMServer) -> None:
    from hermes_agent.builtin_plugins.context.compressor import Compressor

    summariser.script(reply_text("## Goal\nRead the logs."))
    engine = Compressor(agent_for().kernel)
    engine.update_model("fake-model", 4000)
    output = "log line\n" * 100

    def group(call_id: str) -> list[dict[str, Any]]:
        return [{"role": "assistant", "content": "", "tool_calls": [{
                    "id": call_id, "type": "function",
                    "function": {"name": "read_file", "arguments": "{}"}}]},
                {"role": "tool", "tool_call_id": call_id, "tool_name": "read_file",
                 "content": output}]

    messages = [{"role": "user", "content": "read the logs"}, *group("a"),
                {"role": "assistant", "content": "read a"},
                *[{"role": r, "content": f"{r} {i}"} for i in range(10) for r in ("user", "assistant")],
                {"role": "user", "content": "and the last one"}, *group("z")]
    compressed = engine.compress(messages)
    assert compressed[1] == messages[1]  # the call stays with its (cleared) result
    assert compressed[2]["content"].startswith("[Earlier tool output (900 characters)")
    assert compressed[3]["content"].startswith(SUMMARY_MARK)
    assert compressed[-2:] == messages[-2:]  # the tail's tool output is untouched
    transcript = summary_requests(summariser)[0][1]["content"]
    assert "[USER] user 0" in transcript and "read the logs" not in transcript
    assert engine.compression_count == 1 and engine.last_error == ""


def test_nothing_new_to_summarise_is_not_compressed_again(
        agent_for: Any, summariser: FakeLLMServer) -> None:
    from hermes_agent.builtin_plugins.context.compressor import Compressor
    from hermes_agent.builtin_plugins.context.summary import summary_message

    engine = Compressor(agent_for().kernel)
    engine.update_model("fake-model", 4000)
    messages = [{"role": "user", "content": "start"}, {"role": "assistant", "content": "ok"},
                {"role": "user", "content": "more"}, summary_message("## Goal\nEarlier."),
                {"role": "user", "content": "x" * 20_000}]  # the latest turn alone is huge
    assert engine.should_compress(3000) and not engine.has_content_to_compress(messages)
    assert engine.compress(messages) is messages and "nothing to summarise" in engine.last_error
    assert not summariser.posts()


def test_a_store_failure_during_the_split_keeps_the_old_session_going(
        agent_for: Any, summariser: FakeLLMServer, monkeypatch: pytest.MonkeyPatch) -> None:
    import sqlite3

    summariser.script(reply_text("## Goal\nKeep going."))
    agent = agent_for()
    talk(agent, 6)
    session, before = agent.session_id, list(agent.history)

    def disk_full(*args: Any, **kwargs: Any) -> None:
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(agent.sessions.store, "replace_messages", disk_full)
    events: list[dict[str, Any]] = []
    assert agent.compress("", on_event=events.append) is False
    assert "could not be stored" in events[-1]["message"] and "disk is full" in events[-1]["message"]
    assert agent.session_id == session and agent.history == before
    assert agent.sessions.get(session)["end_reason"] is None
    monkeypatch.undo()
    talk(agent, 1)  # the session goes on
    assert agent.sessions.conversation(session)[-1]["content"] == "Noted."


def test_a_compression_between_tool_calls_continues_the_turn_in_the_new_session(
        agent_for: Any, server: FakeLLMServer, summariser: FakeLLMServer) -> None:
    from hermes_agent.testing.fake_llm import reply_tool_call

    summariser.script(reply_text("## Goal\nRead the notes."))
    agent = agent_for(toolsets=["file"])
    notes = agent.kernel.home / "notes.txt"
    notes.write_text("a note worth reading\n" * 150)  # ~3,000 characters per read
    talk(agent, 5)
    first = agent.session_id
    assert not summariser.posts()
    server.script(*[reply_tool_call("read_file", {"path": str(notes)}, id=f"r{n}")
                    for n in range(4)], reply_text("All read."))
    events: list[dict[str, Any]] = []
    turn = agent.run_conversation("read the notes four times", on_event=events.append)
    assert turn.completed and turn.final_response == "All read."
    kinds = [e["type"] for e in events]
    assert kinds.count("compressed") == 1
    assert kinds.index("tool_end") < kinds.index("compressed")  # it happened mid-turn
    assert turn.session_id == agent.session_id != first
    assert turn.messages[0]["content"] == "read the notes four times"
    assert turn.messages[-1]["content"] == "All read."
    last = server.posts()[-1].body["messages"]
    assert SUMMARY_MARK in json.dumps(last)
    assert [m.get("tool_call_id") for m in last if m["role"] == "tool"] == ["r0", "r1", "r2", "r3"]
    stored = agent.sessions.conversation(agent.session_id)
    assert stored[-1]["content"] == "All read." and len(stored) == len(agent.history)


def test_preflight_compression_comes_before_plugins_see_the_turn(
        agent_for: Any, summariser: FakeLLMServer) -> None:
    summariser.script(reply_text("## Goal\nWatch the turn."))
    agent = agent_for()
    seen: list[tuple[str, list[dict[str, Any]]]] = []

    def watch(session_id: str, conversation_history: list[dict[str, Any]], **_: Any) -> None:
        seen.append((session_id, conversation_history))

    agent.kernel.register_plugin(lambda ctx: ctx.register_hook("pre_llm_call", watch), "watcher")
    until_compressed(agent, [])
    session_id, history = seen[-1]
    assert session_id == agent.session_id  # the child session's
    assert history[3]["content"].startswith(SUMMARY_MARK)
    assert history == agent.history[:-1]  # all but the answer that followed


def test_a_longer_kept_head_never_keeps_an_earlier_summary_beside_the_new_one(
        agent_for: Any, summariser: FakeLLMServer) -> None:
    summariser.script(reply_text("## Goal\nFirst."), reply_text("## Goal\nSecond, from First."))
    agent = agent_for()
    events: list[dict[str, Any]] = []
    until_compressed(agent, events)
    assert agent.history[3]["content"].startswith(SUMMARY_MARK)
    agent.context.protect_first_n = 6  # the first summary now falls inside the head
    until_compressed(agent, events)
    summaries = [m["content"] for m in agent.history if m["content"].startswith(SUMMARY_MARK)]
    assert len(summaries) == 1 and "Second, from First." in summaries[0]
    assert "## Goal\nFirst." in summary_requests(summariser)[1][0]["content"]


def test_a_successful_compression_ends_the_pause_after_a_failure(
        agent_for: Any, summariser: FakeLLMServer) -> None:
    summariser.script(reply_error(500, "summariser down"))
    agent = agent_for()
    events: list[dict[str, Any]] = []
    for index in range(40):  # until the automatic attempt fails (a 600 s pause follows)
        talk(agent, 1, events, start=index)
        if summariser.posts():
            break
    assert not [e for e in events if e["type"] == "compressed"]
    summariser.script(reply_text("## Goal\nForced."), reply_text("## Goal\nAutomatic again."))
    assert agent.compress("") is True  # /compress is not held back by the pause
    until_compressed(agent, events)  # and after it, automatic compression is back
    assert summary_requests(summariser)[-1] and agent.context.compression_count == 2


def test_slash_new_starts_the_compression_count_again(
        agent_for: Any, summariser: FakeLLMServer) -> None:
    summariser.script(reply_text("## Goal\nPlan the move."))
    agent = agent_for()
    talk(agent, 8)
    state = ChatState(agent=agent, kernel=agent.kernel)
    assert run_slash(state, "/compress").startswith("Compressed ")
    assert "1 compression so far" in run_slash(state, "/usage")
    run_slash(state, "/new")
    assert agent.context.compression_count == 0
    assert "0 compressions so far" in run_slash(state, "/usage")


def interrupt_when_asked(agent: Agent, summariser: FakeLLMServer) -> threading.Thread:
    """A thread that interrupts the agent once the summariser has its request (Ctrl-C)."""

    def watch() -> None:
        deadline = time.monotonic() + 60
        while not summariser.posts() and time.monotonic() < deadline:
            time.sleep(0.01)
        agent.interrupt()

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


def test_an_interrupt_stops_a_stuck_summariser_and_keeps_the_conversation(
        agent_for: Any, summariser: FakeLLMServer) -> None:
    summariser.script(reply_text("## Goal\nToo late.", delay=120))  # stuck
    agent = agent_for()
    events: list[dict[str, Any]] = []
    watcher = interrupt_when_asked(agent, summariser)
    for index in range(40):
        before, session = list(agent.history), agent.session_id
        started = time.monotonic()
        turn = agent.run_conversation(f"turn {index}: {FILLER}", on_event=events.append)
        if summariser.posts():
            break
        assert turn.completed, turn.error
    watcher.join(5)
    assert turn.interrupted and time.monotonic() - started < 60  # not the summariser's 120 s
    assert not [e for e in events if e["type"] == "compressed"]
    assert agent.session_id == session and agent.history[:len(before)] == before
    assert agent.sessions.get(session)["end_reason"] is None
    assert agent.context.compression_count == 0
    # an interrupt is no failure: the next turn may compress at once
    summariser.script(reply_text("## Goal\nOn time."))
    talk(agent, 1, events, start=500)
    assert [e for e in events if e["type"] == "compressed"]


def test_an_interrupt_stops_a_stuck_slash_compress(agent_for: Any,
                                                   summariser: FakeLLMServer) -> None:
    summariser.script(reply_text("## Goal\nToo late.", delay=120))
    agent = agent_for()
    talk(agent, 8)
    before = list(agent.history)
    watcher = interrupt_when_asked(agent, summariser)
    started = time.monotonic()
    assert agent.compress("") is False
    watcher.join(5)
    assert time.monotonic() - started < 60 and agent.history == before


def test_slash_compress_says_why_it_did_not_run_once(
        agent_for: Any, summariser: FakeLLMServer, caplog: pytest.LogCaptureFixture) -> None:
    """Its answer is the report: the same warning is not logged (the chat's terminal would
    show it a second time); the summariser's failure neither."""
    agent = agent_for()
    talk(agent, 1)
    state = ChatState(agent=agent, kernel=agent.kernel)
    caplog.set_level("INFO")
    out = run_slash(state, "/compress")
    assert "context compression did not run (nothing to summarise" in out
    talk(agent, 4, start=1)  # below the threshold: no automatic attempt
    summariser.default_reply = reply_error(500, "summariser down")
    out = run_slash(state, "/compress")
    assert "context compression did not run" in out and "summariser down" in out
    warned = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    # the retry waits of the summariser's calls are progress lines, not the report again
    assert [m for m in warned if "retrying in" not in m] == []
    assert any("summariser down" in r.getMessage() for r in caplog.records)  # INFO: kept


def _tokens(line: str, kind: str) -> int:
    """The ``input``/``output`` token count in a ``/usage`` line."""
    match = re.search(rf"(\d+) {kind} tokens?", line)
    assert match, line
    return int(match.group(1))


def test_slash_usage_after_compress_carries_the_totals_across_the_split(
        agent_for: Any, server: FakeLLMServer, summariser: FakeLLMServer) -> None:
    summariser.script(reply_text("## Goal\nPlan the move."))
    agent = agent_for()
    talk(agent, 8)
    state = ChatState(agent=agent, kernel=agent.kernel)
    parent = agent.session_id
    before = run_slash(state, "/usage").splitlines()[0]
    assert before.startswith(f"session {parent}: 8 model calls, ")
    assert run_slash(state, "/compress").startswith("Compressed ")
    usage = run_slash(state, "/usage").splitlines()
    # the new session made no call yet: no cost, not $0.0000
    assert usage[0] == (f"session {agent.session_id}: 0 model calls, 0 input tokens (0 cached),"
                        " 0 output tokens, estimated cost none (no model call yet)")
    # the eight calls, and the summariser's: a side task's call counts toward its session
    assert usage[1].startswith(f"conversation since {parent} (2 sessions, split by 1 "
                               "compression): 9 model calls, ")
    assert [r.method for r in summariser.requests].count("POST") == 1
    assert _tokens(usage[1], "input") > _tokens(before, "input")
    assert _tokens(usage[1], "output") > _tokens(before, "output")
    assert usage[2].startswith("context: ~") and "(estimated until the next answer)" in usage[2]
    assert not usage[2].startswith("context: ~0 ")
    talk(agent, 1, start=50)
    usage = run_slash(state, "/usage").splitlines()
    assert usage[0].startswith(f"session {agent.session_id}: 1 model call, ")
    assert "10 model calls" in usage[1]
    # a resumed chat shows the same totals (they are the store's, not the process's)
    resumed = Agent(agent.kernel, AgentOptions(stream=False), session_id=parent)
    again = run_slash(ChatState(agent=resumed, kernel=agent.kernel), "/usage").splitlines()
    assert again[:2] == usage[:2]

"""The gateway runner with the in-process test platform and the fake model server."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from hermes_agent.api import InboundMessage, session_store
from hermes_agent.testing.fake_llm import reply_text, reply_tool_call

from .conftest import WAIT, running


def user_texts(request: Any) -> list[str]:
    return [m["content"] for m in request.body["messages"] if m["role"] == "user"]


async def eventually(read: Any, ready: Any) -> Any:
    """``read()`` once ``ready`` accepts it (state.json is rewritten a little later)."""
    deadline = asyncio.get_running_loop().time() + WAIT
    while True:
        try:
            value = read()
            if ready(value):
                return value
        except (OSError, ValueError):
            pass
        assert asyncio.get_running_loop().time() < deadline, "never became ready"
        await asyncio.sleep(0.05)


def posts(server: Any) -> list[Any]:
    return [r for r in server.requests if r.method == "POST"]


def test_two_chats_get_their_own_sessions_and_run_in_parallel(kernel_for, server, gate):
    server.script(reply_tool_call("wait_gate", {}), reply_text("bob's answer"),
                  reply_text("alice's answer"))
    kernel = kernel_for()

    async def scenario() -> None:
        async with running(kernel) as (runner, chat):
            await chat.inject("A", "alice", "a slow question")
            assert await asyncio.to_thread(gate.entered.wait, WAIT)
            await chat.inject("B", "bob", "a quick question")
            assert await chat.wait_for("B", 1) == ["bob's answer"]
            assert chat.texts("A") == []  # alice's turn is still in its tool
            gate.opened.set()
            assert await chat.wait_for("A", 1) == ["alice's answer"]
            a, b = runner.chats["testchat:A"].agent, runner.chats["testchat:B"].agent
            assert a.session_id != b.session_id

    asyncio.run(scenario())
    rows = session_store(kernel).list_sessions(source="testchat")
    assert len(rows) == 2


def test_one_chat_is_answered_in_order(kernel_for, server):
    server.script(reply_text("one"), reply_text("two"), reply_text("three"))
    kernel = kernel_for()

    async def scenario() -> None:
        async with running(kernel) as (_, chat):
            for text in ("first", "second", "third"):
                await chat.inject("A", "alice", text)
            assert await chat.wait_for("A", 3) == ["one", "two", "three"]

    asyncio.run(scenario())
    assert user_texts(posts(server)[-1]) == ["first", "second", "third"]
    assert server.max_in_flight == 1


def test_an_unknown_user_is_refused_and_nothing_is_stored(kernel_for, server, home):
    kernel = kernel_for()

    async def scenario() -> None:
        async with running(kernel) as (_, chat):
            await chat.inject("M", "mallory", "let me in")
            [refusal] = await chat.wait_for("M", 1)
            assert "not allowed" in refusal and "mallory" in refusal

    asyncio.run(scenario())
    assert posts(server) == []
    assert session_store(kernel).list_sessions() == []
    assert not (home / "gateway" / "sessions.json").exists()


def test_allow_lists_from_the_environment(kernel_for, server):
    server.script(reply_text("hi carol"), reply_text("hi dave"))
    kernel = kernel_for(env={"TESTCHAT_ALLOWED_USERS": "carol", "GATEWAY_ALLOWED_USERS": "dave"})

    async def scenario() -> None:
        async with running(kernel) as (_, chat):
            await chat.inject("C", "carol", "hello")
            assert await chat.wait_for("C", 1) == ["hi carol"]
            await chat.inject("D", "dave", "hello")
            assert await chat.wait_for("D", 1) == ["hi dave"]

    asyncio.run(scenario())
    everyone = kernel_for(env={"GATEWAY_ALLOW_ALL_USERS": "true"})
    server.script(reply_text("hi eve"))

    async def anyone() -> None:
        async with running(everyone) as (_, chat):
            await chat.inject("E", "eve", "hello")
            assert await chat.wait_for("E", 1) == ["hi eve"]

    asyncio.run(anyone())


@pytest.mark.parametrize("command", ["/new", "/reset"])
def test_new_starts_a_fresh_session(kernel_for, server, command):
    server.script(reply_text("first answer"), reply_text("second answer"))
    kernel = kernel_for()

    async def scenario() -> tuple[str, str]:
        async with running(kernel) as (runner, chat):
            await chat.inject("A", "alice", "remember me")
            await chat.wait_for("A", 1)
            first = runner.chats["testchat:A"].agent.session_id
            await chat.inject("A", "alice", command)
            await chat.inject("A", "alice", "who am I?")
            texts = await chat.wait_for("A", 3)
            assert texts[1:] == ["Started a new conversation.", "second answer"]
            return first, runner.chats["testchat:A"].agent.session_id

    first, second = asyncio.run(scenario())
    assert first != second
    assert user_texts(posts(server)[-1]) == ["who am I?"]
    assert session_store(kernel).get_session(first)["end_reason"] == "new_session"


def test_a_full_chat_queue_asks_the_sender_to_wait(kernel_for, server, gate, home):
    server.script(reply_tool_call("wait_gate", {}), reply_text("slow done"), reply_text("next"))
    kernel = kernel_for()

    async def scenario() -> list[str]:
        async with running(kernel, max_queue=1) as (runner, chat):
            await chat.inject("A", "alice", "slow")
            assert await asyncio.to_thread(gate.entered.wait, WAIT)
            assert await chat.handle_message(InboundMessage("testchat", "A", "alice", "next")) \
                == "queued"
            assert await chat.handle_message(InboundMessage("testchat", "A", "alice", "more")) \
                == "busy"
            state = await eventually(lambda: json.loads(
                (home / "gateway" / "state.json").read_text()), lambda s: s["queue_depth"] == 1)
            assert state["turns_running"] == 1
            gate.opened.set()
            return await chat.wait_for("A", 3)

    texts = asyncio.run(scenario())
    assert texts[0].startswith("Too many messages are waiting")
    assert texts[1:] == ["slow done", "next"]


def test_a_restarted_gateway_resumes_the_chats_session(kernel_for, server):
    server.script(reply_text("noted"), reply_text("you said: remember me"))

    async def turn(text: str) -> str:
        async with running(kernel_for()) as (runner, chat):
            await chat.inject("A", "alice", text)
            await chat.wait_for("A", 1)
            return runner.chats["testchat:A"].agent.session_id

    first = asyncio.run(turn("remember me"))
    second = asyncio.run(turn("what did I say?"))
    assert first == second
    assert user_texts(posts(server)[-1]) == ["remember me", "what did I say?"]


def test_long_replies_are_split_at_the_platform_limit(kernel_for, server):
    paragraphs = [f"Paragraph {i}: " + "words " * 12 for i in range(6)]
    code = "```\n" + "\n".join(f"line {i}" for i in range(30)) + "\n```"
    answer = "\n\n".join(paragraphs[:3] + [code] + paragraphs[3:])
    server.script(reply_text(answer))
    kernel = kernel_for(platforms={"testchat": {"enabled": True, "allowed_users": "alice",
                                                "max_length": 120}})

    async def scenario() -> list[str]:
        async with running(kernel) as (runner, chat):
            await chat.inject("A", "alice", "write a lot")
            await runner._drain(WAIT)  # every piece is sent before the turn counts as done
            return chat.texts("A")

    pieces = asyncio.run(scenario())
    assert len(pieces) > 3 and all(len(p) <= 120 for p in pieces)
    assert all(p.count("```") % 2 == 0 for p in pieces)  # code blocks closed in each piece
    words = " ".join(pieces).replace("```", " ").split()
    assert words == answer.replace("```", " ").split()
    assert pieces[0].startswith("Paragraph 0") and any(p.startswith("```") for p in pieces)


def test_pre_gateway_dispatch_skips_and_rewrites(kernel_for, server):
    seen: list[str] = []

    def screen(event: Any, gateway: Any, session_store: Any) -> Any:
        seen.append(event.text)
        if event.text == "spam":
            return {"action": "skip", "reason": "spam"}
        if event.text.startswith("rw:"):
            return {"action": "rewrite", "text": event.text[3:].upper()}
        return None

    server.script(reply_text("ok"))
    kernel = kernel_for(hooks={"pre_gateway_dispatch": screen})

    async def scenario() -> None:
        async with running(kernel) as (_, chat):
            await chat.inject("A", "alice", "spam")
            await chat.inject("M", "mallory", "spam")  # skipped before access control
            await chat.inject("A", "alice", "rw:loud")
            assert await chat.wait_for("A", 1) == ["ok"]

    asyncio.run(scenario())
    assert seen == ["spam", "spam", "rw:loud"]
    [request] = posts(server)
    assert user_texts(request) == ["LOUD"]


def test_status_and_stop_in_a_chat(kernel_for, server, gate, home):
    server.script(reply_tool_call("wait_gate", {}), reply_text("never sent"))
    kernel = kernel_for()

    async def scenario() -> list[str]:
        async with running(kernel) as (runner, chat):
            await chat.inject("A", "alice", "slow")
            assert await asyncio.to_thread(gate.entered.wait, WAIT)
            await chat.inject("A", "alice", "/status")
            [status] = await chat.wait_for("A", 1)
            assert "Running: yes" in status
            state = await eventually(lambda: json.loads(
                (home / "gateway" / "state.json").read_text()), lambda s: s["chats"] == 1)
            assert state["platforms"] == ["testchat"] and state["turns_running"] == 1
            await chat.inject("A", "alice", "/stop")
            gate.opened.set()
            return await chat.wait_for("A", 3)

    texts = asyncio.run(scenario())
    assert texts[1] == "Stopping the current turn."
    assert "never sent" not in texts
    assert not (home / "gateway" / "state.json").exists()  # removed at shutdown


def test_a_plugin_reaches_the_live_adapter_through_its_context(kernel_for):
    kernel = kernel_for()
    contexts: list[Any] = []

    def tools_plugin(ctx: Any) -> None:  # a plugin whose tools would message a chat
        contexts.append(ctx)

    kernel.register_plugin(tools_plugin)
    [ctx] = contexts
    assert ctx.get_platform_adapter("testchat") is None  # no gateway runs yet

    async def scenario() -> None:
        async with running(kernel) as (_, chat):
            assert ctx.get_platform_adapter("testchat") is chat
            assert ctx.get_platform_adapter("nowhere") is None

    asyncio.run(scenario())
    assert ctx.get_platform_adapter("testchat") is None


def test_plugin_slash_commands_answer_in_the_chat(kernel_for, server):
    server.script(reply_text("a path"))
    kernel = kernel_for()

    def greet(ctx: Any) -> None:
        ctx.register_command("greet", lambda raw: f"hello {raw or 'there'}", "Say hello.")

    kernel.register_plugin(greet)

    async def scenario() -> list[str]:
        async with running(kernel) as (_, chat):
            await chat.inject("A", "alice", "/greet alice")
            await chat.inject("A", "alice", "/etc/hosts is what?")  # not a command
            return await chat.wait_for("A", 2)

    assert asyncio.run(scenario()) == ["hello alice", "a path"]
    assert user_texts(posts(server)[-1]) == ["/etc/hosts is what?"]


def test_a_transient_send_failure_is_retried_once_delivered(kernel_for, server):
    from hermes_agent.api import SendResult

    server.script(reply_text("made it"), reply_text("lost"), reply_text("third"))
    kernel = kernel_for()

    async def scenario() -> tuple[list[str], int]:
        async with running(kernel) as (_, chat):
            chat.failures = [SendResult(False, error="429", retryable=True, retry_after=0.01),
                             SendResult(False, error="503", retryable=True)]
            await chat.inject("A", "alice", "hello")
            assert await chat.wait_for("A", 1) == ["made it"]
            assert chat.attempts == 3
            chat.failures = [SendResult(False, error="forbidden")]  # not retryable
            await chat.inject("A", "alice", "again")
            await chat.inject("A", "alice", "and again")  # answered after "again" was tried
            return await chat.wait_for("A", 2), chat.attempts

    texts, attempts = asyncio.run(scenario())
    assert texts == ["made it", "third"]
    assert attempts == 3 + 1 + 1

"""What keeps a gateway turn safe: the durable inbox (accepted messages survive a stop
mid-turn), tool approvals asked in the chat that started the turn, and session hygiene
before a turn."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from hermes_agent.api import InboundMessage, session_store
from hermes_agent.builtin_plugins.gateway.inbox import Inbox
from hermes_agent.testing.fake_llm import reply_text, reply_tool_call

from .conftest import WAIT, running


async def until(condition: Any) -> None:
    deadline = asyncio.get_running_loop().time() + WAIT
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "the condition never held"
        await asyncio.sleep(0.01)


def posts(server: Any) -> list[Any]:
    return [r for r in server.requests if r.method == "POST"]


def test_an_accepted_message_is_in_the_inbox_until_answered(kernel_for, server, gate, home):
    server.script(reply_tool_call("wait_gate", {}), reply_text("answered"))
    kernel = kernel_for()

    async def scenario() -> None:
        async with running(kernel) as (runner, chat):
            outcome = await chat.handle_message(
                InboundMessage("testchat", "A", "alice", "keep me", raw={"update_id": 7}))
            assert outcome == "queued"
            assert await asyncio.to_thread(gate.entered.wait, WAIT)
            [(_, key, stored)] = runner.inbox.pending()  # durable while the turn runs
            assert key == "testchat:A" and stored.text == "keep me"
            assert stored.raw == {"update_id": 7}
            gate.opened.set()
            assert await chat.wait_for("A", 1) == ["answered"]
            await runner._drain(WAIT)
            assert runner.inbox.pending() == []

    asyncio.run(scenario())


def test_a_restarted_gateway_answers_what_the_last_one_accepted(kernel_for, server, home):
    # What a gateway killed mid-turn leaves behind: two accepted, unanswered messages.
    inbox = Inbox(home)
    for text in ("first", "second"):
        inbox.accept("testchat:A", InboundMessage("testchat", "A", "alice", text))
    inbox.close()
    server.script(reply_text("one"), reply_text("two"))
    kernel = kernel_for()

    async def scenario() -> None:
        async with running(kernel) as (runner, chat):
            assert await chat.wait_for("A", 2) == ["one", "two"]
            await runner._drain(WAIT)
            assert runner.inbox.pending() == []

    asyncio.run(scenario())
    users = [m["content"] for m in posts(server)[-1].body["messages"] if m["role"] == "user"]
    assert users == ["first", "second"]


def test_stop_forgets_the_waiting_messages(kernel_for, server, gate):
    server.script(reply_tool_call("wait_gate", {}), reply_text("late"))
    kernel = kernel_for()

    async def scenario() -> None:
        async with running(kernel) as (runner, chat):
            await chat.inject("A", "alice", "slow")
            assert await asyncio.to_thread(gate.entered.wait, WAIT)
            await chat.inject("A", "alice", "waiting")
            assert len(runner.inbox.pending()) == 2
            await chat.inject("A", "alice", "/stop")
            gate.opened.set()
            await runner._drain(WAIT)
            assert runner.inbox.pending() == []

    asyncio.run(scenario())


def danger_script(victim: Path) -> tuple[Any, ...]:
    return (reply_tool_call("terminal", {"command": f"rm -rf {victim}"}), reply_text("done"))


def approval_turn(kernel: Any, answer: str | None) -> list[str]:
    async def scenario() -> list[str]:
        async with running(kernel) as (runner, chat):
            await chat.inject("A", "alice", "clean up")
            [question] = await chat.wait_for("A", 1)
            assert question.startswith("⚠ Approval needed") and "rm -rf" in question
            if answer is not None:  # (the unanswered case's 1 s timeout may pass meanwhile)
                await chat.inject("A", "bob", "once")  # not the asker: a message of its own
                assert runner.chats["testchat:A"].queue.qsize() == 1
                await chat.inject("A", "alice", answer)
            return await chat.wait_for("A", 2)

    return asyncio.run(scenario())


def test_an_approval_is_asked_in_the_chat_and_a_denial_keeps_the_file(kernel_for, server,
                                                                        tmp_path):
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text("precious")
    server.script(*danger_script(victim), reply_text("bob's turn"))
    texts = approval_turn(kernel_for(), "deny")
    assert texts[1] == "done"
    assert (victim / "keep.txt").read_text() == "precious"
    tool_result = [m for m in posts(server)[1].body["messages"] if m["role"] == "tool"][0]
    assert "Denied by the user" in tool_result["content"]


def test_an_approval_given_in_the_chat_runs_the_command(kernel_for, server, tmp_path):
    victim = tmp_path / "victim"
    victim.mkdir()
    server.script(*danger_script(victim), reply_text("bob's turn"))
    # the approval is under test; the sandbox would hide tmp_path (its own tests: core_tools)
    texts = approval_turn(kernel_for(sandbox={"mode": "off"}), "once")
    assert texts[1] == "done"
    assert not victim.exists()


def test_an_unanswered_approval_is_denied_at_its_timeout(kernel_for, server, tmp_path):
    victim = tmp_path / "victim"
    victim.mkdir()
    server.script(*danger_script(victim))
    texts = approval_turn(kernel_for(approvals={"timeout": 1}), None)
    assert texts[1] == "done"
    assert victim.exists()
    tool_result = [m for m in posts(server)[1].body["messages"] if m["role"] == "tool"][0]
    assert "nobody answered" in tool_result["content"]


def small_window(kernel_for: Any, server: Any, compress: bool = True) -> Any:
    return kernel_for(model={"provider": "custom", "base_url": server.openai_base_url,
                             "default": "fake-model", "max_retries": 0,
                             "context_length": 16_000},
                      compression={"enabled": compress, "threshold": 1.0, "protect_last_n": 2})


def test_a_session_near_the_window_is_compressed_before_the_turn(kernel_for, server, home):
    # A first gateway run (compression off) leaves a session over the 16,000-token window.
    filling = small_window(kernel_for, server, compress=False)
    server.script(*(reply_text(f"noted {n}") for n in range(4)))

    async def first() -> str:
        async with running(filling) as (runner, chat):
            for n in range(4):
                await chat.inject("A", "alice", f"remember item {n} " + "z" * 16_000)
            await chat.wait_for("A", 4)
            assert runner.chats["testchat:A"].agent.context_fill() > 1.0
            return runner.chats["testchat:A"].agent.session_id

    old = asyncio.run(first())
    kernel = small_window(kernel_for, server)
    server.script(reply_text("summary of the chat"), reply_text("fresh answer"))

    async def second() -> str:
        async with running(kernel) as (runner, chat):  # a restarted gateway, same chat
            await chat.inject("A", "alice", "and now?")
            assert await chat.wait_for("A", 1) == ["fresh answer"]
            return runner.chats["testchat:A"].agent.session_id

    new = asyncio.run(second())
    assert new != old  # compression continues in a child session
    assert session_store(kernel).get_session(new)["parent_session_id"] == old
    last = str(posts(server)[-1].body["messages"])
    assert "summary of the chat" in last
    assert last.count("z" * 16_000) < 4  # the turn went out with the compressed history


def test_no_compression_below_the_hygiene_threshold(kernel_for, server):
    kernel = small_window(kernel_for, server)
    server.script(reply_text("one"), reply_text("two"))

    async def scenario() -> None:
        async with running(kernel) as (runner, chat):
            await chat.inject("A", "alice", "remember " + "v" * 40_000)  # about 2/3 of it
            await chat.inject("A", "alice", "and now?")
            assert await chat.wait_for("A", 2) == ["one", "two"]

    asyncio.run(scenario())
    assert len(posts(server)) == 2  # no summariser call


def test_a_message_arriving_while_the_gateway_stops_is_answered_at_the_next_start(
        kernel_for, server, gate):
    server.script(reply_tool_call("wait_gate", {}), reply_text("slow done"),
                  reply_text("late answer"))
    kernel = kernel_for()

    async def stopping() -> str:
        async with running(kernel) as (runner, chat):
            await chat.inject("A", "alice", "slow")
            assert await asyncio.to_thread(gate.entered.wait, WAIT)
            stop = asyncio.get_running_loop().create_task(runner.stop(WAIT))
            await until(lambda: not runner.accepting)
            outcome = await chat.handle_message(InboundMessage("testchat", "B", "bob", "late"))
            gate.opened.set()
            await stop
            assert chat.texts("A") == ["slow done"] and chat.texts("B") == []
            return outcome

    assert asyncio.run(stopping()) == "queued"

    async def restarted() -> None:
        async with running(kernel) as (_, chat):
            assert await chat.wait_for("B", 1) == ["late answer"]

    asyncio.run(restarted())


def test_a_turn_cut_short_by_shutdown_is_run_again_at_the_next_start(kernel_for, server, home):
    server.script(reply_text("too late", delay=WAIT))
    kernel = kernel_for()

    async def cut_short() -> None:
        async with running(kernel) as (runner, chat):
            await chat.inject("A", "alice", "a long question")
            await until(lambda: not server.pending)  # the model has the request
            await chat.inject("A", "alice", "and another")  # waits behind it
            await runner.stop(0.2)  # the drain times out; the turn is interrupted
            assert chat.texts("A") == []  # no "Stopped." for a turn the gateway cut short

    asyncio.run(cut_short())
    assert [m.text for _, _, m in Inbox(home).pending()] == ["a long question", "and another"]
    assert len(posts(server)) == 1  # the waiting message did not start a turn
    server.script(reply_text("the answer"), reply_text("the other answer"))

    async def restarted() -> None:
        async with running(kernel) as (runner, chat):
            assert await chat.wait_for("A", 2) == ["the answer", "the other answer"]
            await runner._drain(WAIT)
            assert runner.inbox.pending() == []

    asyncio.run(restarted())
    users = [m["content"] for m in posts(server)[-1].body["messages"] if m["role"] == "user"]
    assert users == ["a long question", "and another"]  # the cut-short record was replaced

"""``gateway.workers: 2``: the turns run in worker processes. Two chats are answered; every
hook of their turns fires in a worker (never in the gateway's process), the sessions land in
the shared store, and a worker's tool that needs approval asks in the chat and, approved,
sends through the gateway (send_message over its control socket)."""

from __future__ import annotations

import asyncio
import os
import sys
import zlib
from pathlib import Path
from typing import Any

import pytest

from hermes_agent.api import session_store
from hermes_agent.testing import write_plugin
from hermes_agent.testing.fake_llm import reply_text, reply_tool_call

from .conftest import running

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="Unix sockets")

RECORDER = '''
import json, os
from pathlib import Path

from hermes_agent.api.tools import untrusted_output

HOOKS = ("on_session_start", "pre_llm_call", "post_llm_call", "pre_tool_call",
         "post_tool_call")


def register(ctx):
    log = Path(__file__).parent / "hooks.log"

    def recorder(name):
        def record(**kwargs):
            with log.open("a", encoding="utf-8") as handle:
                handle.write(f"{os.getpid()} {name}\\n")
        return record

    for name in HOOKS:
        ctx.register_hook(name, recorder(name))
    ctx.register_tool("whoami", "testing", {
        "name": "whoami", "description": "The process id.",
        "parameters": {"type": "object", "properties": {}}},
        lambda args, **_: json.dumps({"pid": os.getpid()}))
    ctx.register_tool("read_feed", "testing", {
        "name": "read_feed", "description": "Read the feed.",
        "parameters": {"type": "object", "properties": {}}},
        untrusted_output("feed:news")(lambda args, **_: json.dumps({"items": ["hi"]})))
'''


def worker_of(key: str) -> int:
    return zlib.crc32(key.encode()) % 2


def test_turns_run_in_worker_processes_with_their_hooks(kernel_for, server, home: Path) -> None:
    assert worker_of("testchat:A") != worker_of("testchat:D")  # the two chats: two workers
    log = home / "plugins" / "recorder" / "hooks.log"
    write_plugin(home / "plugins", "recorder", RECORDER)
    server.script(reply_tool_call("whoami", {}), reply_text("A answered"),
                  reply_text("D answered"),
                  reply_tool_call("read_feed", {}),
                  reply_tool_call("send_message", {"target": "testchat", "message": "news"}),
                  reply_text("posted"))
    kernel = kernel_for(gateway={"workers": 2},
                        plugins={"enabled": ["recorder"]},
                        platforms={"testchat": {"enabled": True,
                                                "allowed_users": ["alice", "bob"],
                                                "home_channel": "home-1"}})

    async def scenario() -> tuple[Any, list[int]]:
        async with running(kernel) as (runner, chat):
            pids = runner.workers.pids
            await chat.inject("A", "alice", "who runs this?")
            assert await chat.wait_for("A", 1) == ["A answered"]
            await chat.inject("D", "bob", "hello")
            assert await chat.wait_for("D", 1) == ["D answered"]
            await chat.inject("A", "alice", "post the news")
            texts = await chat.wait_for("A", 2)
            assert texts[1].startswith("⚠ Approval needed") and "send_message" in texts[1]
            await chat.inject("A", "alice", "once")
            assert (await chat.wait_for("A", 3))[2] == "posted"
            return chat, pids

    chat, pids = asyncio.run(scenario())
    assert chat.texts("home-1") == ["news"]  # from the worker, through the control socket
    assert len(set(pids)) == 2 and os.getpid() not in pids
    fired = [line.split() for line in log.read_text().splitlines()]
    assert {pid for pid, _ in fired} == {str(p) for p in pids}  # both workers, never here
    assert {name for _, name in fired} >= {"on_session_start", "pre_llm_call",
                                           "pre_tool_call", "post_tool_call"}
    whoami = [m for m in server.posts()[1].body["messages"] if m["role"] == "tool"][0]
    assert str(pids[worker_of("testchat:A")]) in whoami["content"]
    assert len(session_store(kernel).list_sessions(source="testchat")) == 2


def test_a_killed_worker_fails_its_turn_and_the_chat_goes_on_in_a_new_one(kernel_for,
                                                                        server) -> None:
    import signal

    server.script(reply_text("first"), reply_text("never sent", delay=60))
    kernel = kernel_for(gateway={"workers": 1})

    async def scenario() -> tuple[Any, int, int]:
        async with running(kernel) as (runner, chat):
            await chat.inject("A", "alice", "one")
            assert await chat.wait_for("A", 1) == ["first"]
            session = runner.chats["testchat:A"].agent.session_id
            [old] = runner.workers.pids
            await chat.inject("A", "alice", "two")  # its model call hangs
            await asyncio.wait_for(_until(lambda: server.pending == 0), 30)  # it was asked
            server.script(reply_text("third"))
            os.kill(old, signal.SIGKILL)
            texts = await chat.wait_for("A", 2)
            assert texts[1] == "Sorry, that turn failed; see the gateway log."
            await chat.inject("A", "alice", "three")
            assert (await chat.wait_for("A", 3))[2] == "third"
            [new] = runner.workers.pids
            assert runner.chats["testchat:A"].agent.session_id == session  # continued
            return chat, old, new

    chat, old, new = asyncio.run(scenario())
    assert old != new
    last = [r for r in server.requests if r.method == "POST"][-1]
    users = [m["content"] for m in last.body["messages"] if m["role"] == "user"]
    # the same session, in the new worker (it kept the cut-short turn's message)
    assert users[0] == "one" and users[-1].endswith("three")


async def _until(check: Any) -> None:
    while not check():
        await asyncio.sleep(0.02)


def test_a_real_gateway_with_workers_answers_telegram(home: Path, fake_llm: Any) -> None:
    """`hermes gateway run` with gateway.workers: 1 (the console script spawns its worker):
    a Telegram message is answered from the worker."""
    import signal
    import subprocess

    import yaml

    from hermes_agent.testing.fake_telegram import FakeTelegram

    from .test_kill import ALICE, gateway, wait_for

    with FakeTelegram() as telegram:
        (home / "config.yaml").write_text(yaml.safe_dump({
            "model": {"provider": "custom", "base_url": fake_llm.openai_base_url,
                      "default": "fake-model", "max_retries": 0},
            "sessions": {"auto_title": False},
            "gateway": {"workers": 1, "stream_replies": False, "run_cron": False},
            "plugins": {"enabled": ["recorder"]},
            "platforms": {"telegram": {"enabled": True, "base_url": telegram.base_url,
                                       "poll_timeout": 1}}}))
        write_plugin(home / "plugins", "recorder", RECORDER)
        fake_llm.script(reply_tool_call("whoami", {}), reply_text("from a worker"))
        proc = gateway(home, telegram)
        try:
            telegram.user_message(ALICE, ALICE, "hello")
            wait_for(lambda: telegram.texts(ALICE), "the answer", proc)
            status = subprocess.run([str(Path(sys.executable).parent / "hermes"), "gateway",
                                     "status"], capture_output=True, text=True, timeout=60,
                                    env={**os.environ, "HERMES_HOME": str(home)})
            assert "turns run in 1 worker process(es)" in status.stdout, status.stderr
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(60)
        assert telegram.texts(ALICE) == ["from a worker"]
        assert proc.returncode == 0
    tool = [m for m in fake_llm.posts()[1].body["messages"] if m["role"] == "tool"][0]
    pid = int(tool["content"].split('"pid": ')[1].split("}")[0])
    assert pid != proc.pid  # the turn ran in the worker process
    fired = (home / "plugins" / "recorder" / "hooks.log").read_text().split()
    assert str(pid) in fired and str(proc.pid) not in fired


PARITY = '''
import os
from pathlib import Path

from hermes_agent.hookspecs import EVENT_HOOKS


def register(ctx):
    log = Path(__file__).parent / "hooks.log"

    def recorder(name):
        def record(**kwargs):
            with log.open("a", encoding="utf-8") as handle:
                handle.write(f"{os.getpid()} {name}\\n")
        return record

    for name in EVENT_HOOKS:
        if name != "pre_gateway_dispatch":  # the gateway's own, before any turn
            ctx.register_hook(name, recorder(name))
'''


def test_a_workers_turn_fires_the_hooks_of_a_cli_turn(kernel_for, server, home: Path) -> None:
    """Hook parity with gateway.workers: the same scripted turn fires the same hooks, in the
    same order, in the worker as through the agent API in this process."""
    write_plugin(home / "plugins", "recorder", RECORDER)
    write_plugin(home / "plugins", "parity", PARITY)
    log = home / "plugins" / "parity" / "hooks.log"
    kernel = kernel_for(gateway={"workers": 1}, plugins={"enabled": ["recorder", "parity"]})
    script = (reply_tool_call("whoami", {}), reply_text("done"))

    server.script(*script)
    agent = kernel.service("agent").create(platform="cli")
    assert agent.run_conversation("who runs this?").final_response == "done"
    cli = [line.split() for line in log.read_text().splitlines()]
    log.unlink()

    server.script(*script)

    async def scenario() -> list[int]:
        async with running(kernel) as (runner, chat):
            await chat.inject("A", "alice", "who runs this?")
            assert await chat.wait_for("A", 1) == ["done"]
            return runner.workers.pids

    [worker] = asyncio.run(scenario())
    turn = [line.split() for line in log.read_text().splitlines()]
    assert {pid for pid, _ in cli} == {str(os.getpid())}
    assert {pid for pid, _ in turn} == {str(worker)}  # every hook in the worker
    names = [name for _, name in turn][:len(cli)]  # (then the shutdown's own hooks)
    assert names == [name for _, name in cli], "the worker's turn fired other hooks"
    assert {"on_session_start", "pre_llm_call", "pre_tool_call", "post_tool_call"} <= set(names)


def test_a_workers_reply_streams_into_the_chat(kernel_for, server, monkeypatch) -> None:
    """The text the model writes in the worker reaches the chat while it is written (the
    turn's events cross the pipe): one message, edited into the answer."""
    from hermes_agent.kits.chat_text import EditedReply

    from . import conftest
    from .test_streaming import EditingAdapter

    monkeypatch.setattr(EditedReply, "interval", 0.0)  # every piece edits (the test's pace)
    monkeypatch.setattr(conftest, "TestAdapter", EditingAdapter)
    server.script(reply_text("The gate is open.", chunk_size=3))
    kernel = kernel_for(gateway={"workers": 1})

    async def scenario() -> Any:
        async with running(kernel) as (_, chat):
            await chat.inject("A", "alice", "is the gate open?")
            await asyncio.wait_for(_until(
                lambda: chat.edits and chat.edits[-1][1] == "The gate is open."), 30)
            return chat

    chat = asyncio.run(scenario())
    assert len(chat.texts("A")) == 1 and len(chat.edits) > 2
    assert {mid for mid, _ in chat.edits} == {"1"}


def test_stop_interrupts_a_turn_running_in_a_worker(kernel_for, server) -> None:
    server.script(reply_text("never sent", delay=60))
    kernel = kernel_for(gateway={"workers": 1})

    async def scenario() -> list[str]:
        async with running(kernel) as (_, chat):
            await chat.inject("A", "alice", "think hard")
            await asyncio.wait_for(_until(lambda: server.pending == 0), 30)  # model asked
            await chat.inject("A", "alice", "/stop")
            return await chat.wait_for("A", 2)

    texts = asyncio.run(scenario())
    assert texts[0] == "Stopping the current turn."
    assert texts[1] != "never sent"

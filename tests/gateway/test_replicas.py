"""Gateway replicas sharing one PostgreSQL database (the postgres session store's shared
queue): two runners in one process, each with its own kernel and test platform, as two
`hermes gateway` processes would be. Skipped when no PostgreSQL server answers."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from hermes_agent.api import InboundMessage
from hermes_agent.testing import make_kernel
from hermes_agent.testing.fake_llm import FakeLLMServer, reply_text

from .conftest import WAIT, TestAdapter, serving

pytest.importorskip("psycopg", reason="the shared queue needs the session-postgres extra")


def platform(ctx: Any) -> None:
    ctx.register_platform("testchat", "Test chat", adapter_factory=TestAdapter,
                          check_fn=lambda: True)
platform.__name__ = "testchat"


def replica_kernel(home: Path, dsn: str, llm: FakeLLMServer, ttl: float = 15.0) -> Any:
    config = {"model": {"provider": "custom", "base_url": llm.openai_base_url,
                        "default": "fake-model", "max_retries": 0},
              "sessions": {"auto_title": False, "store": "postgres", "dsn": dsn},
              "gateway": {"lease_seconds": ttl, "stream_replies": False},
              # u1 is listed: an unlisted sender's turn would be untrusted, and never asked
              "platforms": {"testchat": {"enabled": True, "allow_all_users": True,
                                         "allowed_users": ["u1"]}},
              # approvals across replicas are under test; the sandbox would hide tmp_path
              "sandbox": {"mode": "off"}}
    return make_kernel(home, config=config, builtins=True, plugins=[platform],
                       env={"HERMES_HOME": str(home)})


@contextlib.asynccontextmanager
async def replica(kernel: Any) -> AsyncIterator[tuple[Any, TestAdapter]]:
    async with serving(kernel, "testchat") as (runner, adapter):
        assert runner.replica is not None
        yield runner, adapter


def answers(adapters: list[TestAdapter], chat_id: str) -> list[str]:
    return [text for adapter in adapters for chat, text, _ in adapter.sent if chat == chat_id]


async def until(condition: Any, what: str) -> None:
    deadline = asyncio.get_running_loop().time() + WAIT
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.02)


def test_two_replicas_answer_every_message_once_in_order(tmp_path, fake_llm, pg_schemas):
    dsn = pg_schemas("replicas")
    fake_llm.script(*[reply_text("ok") for _ in range(80)])
    one = replica_kernel(tmp_path / "one", dsn, fake_llm)
    two = replica_kernel(tmp_path / "two", dsn, fake_llm)

    async def scenario() -> tuple[Any, Any, list[TestAdapter]]:
        async with replica(one) as (first, a), replica(two) as (second, b):
            for round_ in range(2):
                for n in range(20):  # any replica may receive any chat's message
                    receiver = a if (n + round_) % 2 else b
                    outcome = await receiver.handle_message(InboundMessage(
                        "testchat", f"c{n}", f"u{n}", f"message {round_}", message_id=f"{n}-{round_}"))
                    assert outcome == "queued"
            await until(lambda: sum(len(x.sent) for x in (a, b)) >= 40, "40 answers")
            return first, second, [a, b]

    first, second, adapters = asyncio.run(scenario())
    assert sum(len(x.sent) for x in adapters) == 40  # each message answered once
    served = {x: {chat for chat, _, _ in x.sent} for x in adapters}
    assert served[adapters[0]] and served[adapters[1]]  # both replicas served chats
    turns = [[m["content"] for m in r.body["messages"] if m["role"] == "user"]
             for r in fake_llm.requests if r.method == "POST"]
    # each chat's second turn ran after its first, in the same session, whichever replica
    # served each: 20 first turns alone, 20 second turns after them
    assert sorted(turns) == [["message 0"]] * 20 + [["message 0", "message 1"]] * 20


def test_a_dead_replicas_chats_are_finished_by_another(tmp_path, fake_llm, pg_schemas):
    dsn = pg_schemas("failover")
    fake_llm.script(reply_text("cut off", delay=WAIT), reply_text("finished elsewhere"))
    dead = replica_kernel(tmp_path / "dead", dsn, fake_llm, ttl=1.0)
    alive = replica_kernel(tmp_path / "alive", dsn, fake_llm, ttl=1.0)

    async def scenario() -> list[str]:
        from hermes_agent.builtin_plugins.gateway.platforms import build_adapters
        from hermes_agent.builtin_plugins.gateway.runner import GatewayRunner

        adapters, entries, _ = build_adapters(dead)
        doomed = GatewayRunner(dead, adapters, entries=entries)
        await doomed.start()
        await adapters["testchat"].handle_message(
            InboundMessage("testchat", "c1", "u1", "a long question", message_id="m1"))
        await until(lambda: fake_llm.pending == 1, "the doomed replica's model call")
        # it dies: no more claims or renewals, no leave, its turn never answers (a killed
        # process would also write nothing more: its model call is cut here)
        assert doomed.replica is not None
        await doomed.replica.stop_claiming()
        await doomed.replica.stop_renewing()
        for chat in doomed.chats.values():
            if chat.task is not None:
                chat.task.cancel()
            if chat.agent is not None:
                chat.agent.interrupt()
        doomed.executor.shutdown(wait=True)
        async with replica(alive) as (_, survivor):
            await until(lambda: survivor.texts("c1"), "the chat finished by the survivor")
            return survivor.texts("c1")

    assert asyncio.run(scenario()) == ["finished elsewhere"]
    posts = [r for r in fake_llm.requests if r.method == "POST"]
    assert [m["content"] for m in posts[-1].body["messages"] if m["role"] == "user"] == [
        "a long question"]  # the dead replica's record of the turn was replaced


def test_an_approval_answer_received_by_another_replica_reaches_the_turn(tmp_path, fake_llm,
                                                                         pg_schemas):
    from hermes_agent.testing.fake_llm import reply_tool_call

    dsn = pg_schemas("approvals")
    victim = tmp_path / "victim"
    victim.mkdir()
    fake_llm.script(reply_tool_call("terminal", {"command": f"rm -rf {victim}"}),
                    reply_text("cleaned"))
    one = replica_kernel(tmp_path / "one", dsn, fake_llm)
    two = replica_kernel(tmp_path / "two", dsn, fake_llm)

    async def scenario() -> list[str]:
        async with replica(one) as (first, a), replica(two) as (second, b):
            await a.handle_message(InboundMessage("testchat", "c1", "u1", "clean up",
                                                  message_id="m1"))
            await until(lambda: any("Approval needed" in t for t in answers([a, b], "c1")),
                        "the approval question")
            asker = a if any("Approval needed" in t for t in a.texts("c1")) else b
            other = b if asker is a else a
            await other.handle_message(InboundMessage("testchat", "c1", "u1", "once",
                                                      message_id="m2"))
            await until(lambda: "cleaned" in answers([a, b], "c1"), "the turn's answer")
            return answers([a, b], "c1")

    texts = asyncio.run(scenario())
    assert texts[-1] == "cleaned" and not victim.exists()


def test_status_lists_the_live_replicas(tmp_path, fake_llm, pg_schemas):
    import os
    import subprocess
    import sys

    dsn = pg_schemas("status")
    one = replica_kernel(tmp_path / "one", dsn, fake_llm, ttl=0.6)
    replica_kernel(tmp_path / "two", dsn, fake_llm)  # another machine's home, same database
    hermes = Path(sys.executable).parent / "hermes"

    async def scenario() -> tuple[str, Any]:
        async with replica(one) as (first, _):
            assert first.replica is not None
            name = first.replica.name
            await until(lambda: name in str(first.replica.queue.replicas(5)), "a heartbeat")
            status = await asyncio.to_thread(
                subprocess.run, [str(hermes), "gateway", "status"], capture_output=True,
                text=True, timeout=WAIT, env={**os.environ, "HERMES_HOME": str(tmp_path / "two")})
            return name, status

    name, status = asyncio.run(scenario())
    assert status.returncode == 0, status.stderr
    assert "1 replica(s) alive" in status.stdout and name in status.stdout
    assert "platforms testchat" in status.stdout


def test_one_api_conversation_across_two_replicas_stays_one_session(tmp_path, fake_llm,
                                                                    pg_schemas):
    pytest.importorskip("starlette", reason="the api-server needs the platform-api-server extra")
    import httpx2

    from hermes_agent.testing import make_kernel

    dsn = pg_schemas("api")
    fake_llm.script(reply_text("first", delay=1.0), reply_text("second"), reply_text("third"))

    def api_kernel(home: Path) -> Any:
        config = {"model": {"provider": "custom", "base_url": fake_llm.openai_base_url,
                            "default": "fake-model", "max_retries": 0},
                  "sessions": {"auto_title": False, "store": "postgres", "dsn": dsn},
                  "gateway": {"stream_replies": False},
                  "platforms": {"api_server": {"enabled": True, "port": 0}}}
        return make_kernel(home, config=config, builtins=True,
                           env={"HERMES_HOME": str(home), "API_SERVER_KEY": "k"})

    async def ask(http: Any, base: str, text: str) -> str:
        response = await http.post(f"{base}/v1/chat/completions", json={
            "model": "hermes-agent", "messages": [{"role": "user", "content": text}]},
            headers={"Authorization": "Bearer k", "X-Hermes-Session": "conv"})
        return response.json()["choices"][0]["message"]["content"]

    async def scenario() -> list[str]:
        async with serving(api_kernel(tmp_path / "a"), "api_server") as (_, a), \
                serving(api_kernel(tmp_path / "b"), "api_server") as (_, b):
            base_a, base_b = f"http://127.0.0.1:{a.port}", f"http://127.0.0.1:{b.port}"
            async with httpx2.AsyncClient(timeout=WAIT) as http:
                first = asyncio.ensure_future(ask(http, base_a, "one"))
                await until(lambda: fake_llm.pending == 2, "the first turn at the model")
                second = await ask(http, base_b, "two")  # waits for replica a's turn
                third = await ask(http, base_a, "three")
                return [await first, second, third]

    assert asyncio.run(scenario()) == ["first", "second", "third"]
    users = [[m["content"] for m in r.body["messages"] if m["role"] == "user"]
             for r in fake_llm.requests if r.method == "POST"]
    assert users == [["one"], ["one", "two"], ["one", "two", "three"]]


def test_an_unreachable_shared_database_stops_the_gateway_with_the_fix(tmp_path):
    import os
    import subprocess
    import sys

    home = tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").write_text(
        'sessions: {store: postgres, dsn: "postgresql://hermes:s3cret-pw@127.0.0.1:1/test"}\n'
        "platforms: {api_server: {enabled: true, port: 0, "
        "allow_unauthenticated_loopback: true}}\n")
    hermes = Path(sys.executable).parent / "hermes"
    run = subprocess.run([str(hermes), "gateway", "run"], capture_output=True, text=True,
                         timeout=WAIT, env={**os.environ, "HERMES_HOME": str(home)})
    assert run.returncode == 1
    assert "cannot connect to the PostgreSQL session store" in run.stderr
    assert "hermes:***@127.0.0.1:1" in run.stderr and "s3cret-pw" not in run.stderr
    assert "Traceback" not in run.stderr

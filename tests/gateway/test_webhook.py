"""The webhook platform, started by a real gateway runner on a free loopback port: signed
messages are POSTed to it with httpx, the agent behind it talks to the fake model server, and
its replies reach a small Starlette receiver that checks their signatures."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2
import pytest
import yaml

from hermes_agent.api import session_store
from hermes_agent.testing import make_kernel
from hermes_agent.testing.fake_llm import FakeLLMServer, reply_text

pytest.importorskip("starlette", reason="the webhook needs starlette: "
                    "pip install 'hermes-agent-runtime[platform-webhook]'")
pytest.importorskip("uvicorn", reason="the webhook needs uvicorn: "
                    "pip install 'hermes-agent-runtime[platform-webhook]'")

from hermes_agent.plugins.platforms.webhook.signing import sign  # noqa: E402

SECRET = "whsec-test-0123456789abcdef"
WAIT = 30.0


@dataclass
class Receiver:
    """Where replies go: records each POST (raw body and headers) and answers with the next
    scripted ``(status, headers)``, then 200."""

    answers: list[tuple[int, dict[str, str]]] = field(default_factory=list)
    received: list[tuple[dict[str, str], bytes, int]] = field(default_factory=list)
    url: str = ""
    changed: asyncio.Condition = field(default_factory=asyncio.Condition)

    async def wait_for(self, count: int) -> list[tuple[dict[str, str], bytes, int]]:
        async with self.changed:
            await asyncio.wait_for(self.changed.wait_for(
                lambda: len(self.received) >= count), WAIT)
        return self.received[:count]

    def delivered(self) -> list[dict[str, Any]]:
        """The bodies the receiver accepted (answered 2xx)."""
        return [json.loads(body) for _, body, status in self.received if status < 300]


def _socket() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    sock.setblocking(False)
    return sock


@contextlib.asynccontextmanager
async def receiving(*answers: tuple[int, dict[str, str]]) -> AsyncIterator[Receiver]:
    import uvicorn
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    receiver = Receiver(list(answers))

    async def replies(request: Request) -> JSONResponse:
        status, headers = receiver.answers.pop(0) if receiver.answers else (200, {})
        async with receiver.changed:
            receiver.received.append(({k.lower(): v for k, v in request.headers.items()},
                                      await request.body(), status))
            receiver.changed.notify_all()
        return JSONResponse({"ok": status < 300}, status_code=status, headers=headers)

    class Server(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            yield

    sock = _socket()
    receiver.url = f"http://127.0.0.1:{sock.getsockname()[1]}/replies"
    server = Server(uvicorn.Config(Starlette(routes=[Route("/replies", replies, methods=["POST"])]),
                                   log_level="warning", lifespan="off", access_log=False))
    task = asyncio.get_running_loop().create_task(server.serve([sock]))
    try:
        yield receiver
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, WAIT)


def kernel(home: Path, server: FakeLLMServer, reply_url: str, env: dict[str, str] | None = None,
           **section: Any) -> Any:
    config = {"model": {"provider": "custom", "base_url": server.openai_base_url,
                        "default": "fake-model", "max_retries": 0},
              "sessions": {"auto_title": False},
              "platforms": {"webhook": {"enabled": True, "port": 0, "reply_url": reply_url,
                                        **section}}}
    return make_kernel(home, config=config, builtins=True,
                       env={"HERMES_HOME": str(home), "WEBHOOK_SECRET": SECRET, **(env or {})})


@contextlib.asynccontextmanager
async def served(kernel: Any) -> AsyncIterator[tuple[Any, Any, str]]:
    """A started gateway with the webhook: the runner, the adapter and the webhook's URL."""
    from hermes_agent.builtin_plugins.gateway.platforms import build_adapters
    from hermes_agent.builtin_plugins.gateway.runner import GatewayRunner

    adapters, entries, problems = build_adapters(kernel)
    assert not problems
    runner = GatewayRunner(kernel, adapters, entries=entries)
    assert await runner.start() == ["webhook"]
    adapter = adapters["webhook"]
    try:
        yield runner, adapter, f"http://127.0.0.1:{adapter.port}/webhook"
    finally:
        await runner.stop(WAIT)


async def post(url: str, body: bytes, *, secret: str = SECRET, timestamp: str | None = "now",
               signature: str | None = None) -> httpx2.Response:
    """POST ``body`` signed with ``secret`` (with the current time unless ``timestamp`` is
    None), or with the given ``signature``; ``signature=""`` sends none."""
    stamp = str(int(time.time())) if timestamp == "now" else timestamp
    headers = {"Content-Type": "application/json"}
    if stamp is not None:
        headers["X-Hermes-Timestamp"] = stamp
    sig = sign(secret, body, stamp) if signature is None else signature
    if sig:
        headers["X-Hermes-Signature"] = sig
    async with httpx2.AsyncClient(trust_env=False, timeout=WAIT) as client:
        return await client.post(url, content=body, headers=headers)


def message(text: str, chat_id: str = "room-1", **extra: Any) -> bytes:
    return json.dumps({"chat_id": chat_id, "user_id": "u-7", "text": text, **extra}).encode()


def posts(server: FakeLLMServer) -> list[Any]:
    return [r for r in server.requests if r.method == "POST"]


def verified(headers: dict[str, str], body: bytes) -> bool:
    return headers["x-hermes-signature"] == sign(SECRET, body, headers["x-hermes-timestamp"])


def test_a_signed_message_gets_a_signed_reply(home, fake_llm, caplog):
    caplog.set_level(logging.DEBUG)
    fake_llm.script(reply_text("hello from hermes"), reply_text("second answer"))

    async def scenario() -> None:
        nonlocal k
        async with receiving() as receiver, served(
                k := kernel(home, fake_llm, receiver.url)) as (runner, _, url):
            first = await post(url, message("hi there", thread_id="t-1", message_id="m-1",
                                            user_name="Ada"))
            assert first.status_code == 202 and first.json() == {"status": "accepted",
                                                                 "id": "m-1"}
            [(headers, body, _)] = await receiver.wait_for(1)
            assert verified(headers, body)
            reply = json.loads(body)
            assert reply == {"chat_id": "room-1", "thread_id": "t-1", "reply_to": "m-1",
                             "text": "hello from hermes", "message_id": reply["message_id"]}
            assert headers["x-hermes-delivery"] == reply["message_id"]
            # signed over the body alone (no timestamp) is accepted too; the id is made up
            second = await post(url, message("again", chat_id="room-2"), timestamp=None)
            assert second.status_code == 202 and second.json()["id"]
            _, (headers2, body2, _) = await receiver.wait_for(2)
            assert verified(headers2, body2)
            assert json.loads(body2)["text"] == "second answer"
            assert json.loads(body2)["reply_to"] == second.json()["id"]
            assert sorted(runner.chats) == ["webhook:room-1:t-1", "webhook:room-2"]

    k: Any = None
    asyncio.run(scenario())
    assert len(session_store(k).list_sessions(source="webhook")) == 2
    assert [m["content"] for m in posts(fake_llm)[0].body["messages"]
            if m["role"] == "user"] == ["hi there"]
    assert "webhook: listening on" in caplog.text
    assert SECRET not in caplog.text


def test_bad_signatures_are_refused_and_nothing_reaches_the_gateway(home, fake_llm, caplog):
    caplog.set_level(logging.DEBUG)
    k = kernel(home, fake_llm, "http://127.0.0.1:9/unused")

    async def scenario() -> None:
        async with served(k) as (runner, _, url):
            body = message("let me in")
            stale = str(int(time.time()) - 3600)
            for kwargs in ({"secret": "not-the-secret"}, {"signature": ""},
                           {"signature": "sha256=" + "0" * 64}, {"timestamp": stale},
                           {"signature": sign(SECRET, body)}):  # signed without the timestamp
                refused = await post(url, body, **kwargs)
                assert refused.status_code == 401, kwargs
                assert "X-Hermes-" in refused.json()["error"]
            assert "WEBHOOK_SECRET" in (await post(url, body, secret="x")).json()["error"]
            malformed = await post(url, b"{not json")
            assert malformed.status_code == 400 and "JSON" in malformed.json()["error"]
            missing = await post(url, json.dumps({"chat_id": "c", "user_id": "u"}).encode())
            assert missing.status_code == 400 and "'text'" in missing.json()["error"]
            replayed = message("once", message_id="m-9")
            stamp = str(int(time.time()))
            signature = sign(SECRET, replayed, stamp)
            async with httpx2.AsyncClient(trust_env=False, timeout=WAIT) as client:
                headers = {"X-Hermes-Timestamp": stamp, "X-Hermes-Signature": signature}
                statuses = [(await client.post(url, content=replayed, headers=headers)).status_code
                            for _ in range(2)]
            assert statuses == [202, 409]
            async with asyncio.timeout(WAIT):
                while "webhook:room-1" not in runner.chats:
                    await asyncio.sleep(0.01)
            assert list(runner.chats) == ["webhook:room-1"]  # only the accepted one

    fake_llm.script(reply_text("accepted once"))
    asyncio.run(scenario())
    store = session_store(k)
    assert [m["content"] for r in posts(fake_llm) for m in r.body["messages"]
            if m["role"] == "user"] == ["once"]
    assert len(store.list_sessions(source="webhook")) == 1
    assert SECRET not in caplog.text


def test_refused_bodies_store_nothing(home, fake_llm):
    k = kernel(home, fake_llm, "http://127.0.0.1:9/unused")

    async def scenario() -> None:
        async with served(k) as (runner, _, url):
            assert (await post(url, message("no"), secret="wrong")).status_code == 401
            assert (await post(url, b"[1, 2]")).status_code == 400
            assert runner.chats == {}

    asyncio.run(scenario())
    assert posts(fake_llm) == []
    assert session_store(k).list_sessions() == []


@pytest.mark.parametrize("env, section, needle", [
    ({"WEBHOOK_SECRET": ""}, {}, "WEBHOOK_SECRET"),
    ({}, {"secret": SECRET}, "do not put the secret in config.yaml"),
    ({}, {"reply_url": "ftp://example.test/x"}, "WEBHOOK_REPLY_URL"),
])
def test_refuses_to_start_and_says_what_to_set(home, fake_llm, caplog, env, section, needle):
    from hermes_agent.builtin_plugins.gateway.platforms import build_adapters

    section = {"reply_url": "http://127.0.0.1:9/replies", **section}
    k = kernel(home, fake_llm, section.pop("reply_url"), env=env, **section)
    adapters, _, problems = build_adapters(k)
    assert adapters == {}
    [problem] = problems
    assert problem.startswith("webhook:") and needle in problem
    assert SECRET not in problem and SECRET not in caplog.text


def test_the_gateway_reports_a_missing_secret(home, fake_llm):
    (home / "config.yaml").write_text(yaml.safe_dump({
        "model": {"provider": "custom", "base_url": fake_llm.openai_base_url},
        "platforms": {"webhook": {"enabled": True, "port": 0,
                                  "reply_url": "http://127.0.0.1:9/replies"}}}))
    hermes = Path(sys.executable).parent / "hermes"
    env = {k: v for k, v in os.environ.items() if not k.startswith("WEBHOOK_")}
    proc = subprocess.run([str(hermes), "gateway", "run"], env={**env, "HERMES_HOME": str(home)},
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0
    assert "webhook" in proc.stderr and "WEBHOOK_SECRET" in proc.stderr
    assert "no enabled platform could start" in proc.stderr


def test_a_receiver_answering_503_then_200_gets_the_reply_once(home, fake_llm):
    fake_llm.script(reply_text("worth the wait"))

    async def scenario() -> None:
        async with receiving((503, {"Retry-After": "0.2"})) as receiver, served(
                kernel(home, fake_llm, receiver.url)) as (_, _, url):
            assert (await post(url, message("hello", message_id="m-1"))).status_code == 202
            (h1, b1, s1), (h2, b2, s2) = await receiver.wait_for(2)
            assert (s1, s2) == (503, 200)
            assert b1 == b2  # the same reply, the same id; only its timestamp header differs
            assert h1["x-hermes-delivery"] == h2["x-hermes-delivery"]
            assert verified(h2, b2)
        assert [r["text"] for r in receiver.delivered()] == ["worth the wait"]
        assert len(receiver.received) == 2  # nothing more once it was taken

    asyncio.run(scenario())


def test_send_reports_what_may_be_retried(home, fake_llm):
    async def scenario() -> None:
        async with receiving((429, {"Retry-After": "7"}), (404, {}), (500, {})) as receiver:
            async with served(kernel(home, fake_llm, receiver.url)) as (_, adapter, _):
                limited = await adapter.send("c", "one")
                assert (limited.success, limited.retryable, limited.retry_after) == (
                    False, True, 7.0)
                missing = await adapter.send("c", "two")
                assert (missing.success, missing.retryable) == (False, False)
                failed = await adapter.send("c", "three", metadata={"thread_id": "t"})
                assert (failed.success, failed.retryable, failed.retry_after) == (
                    False, True, None)
                ok = await adapter.send("c", "three", metadata={"thread_id": "t"})
                assert ok.success
                ids = [h["x-hermes-delivery"] for h, _, _ in receiver.received]
                assert ids[2] == ids[3] == ok.message_id  # the retry reuses the id
                assert len(set(ids[:3])) == 3
                fresh = await adapter.send("c", "three", metadata={"thread_id": "t"})
                assert fresh.message_id != ok.message_id  # a new reply, a new id
        closed = _socket()  # a port nobody answers on: connection refused
        url = f"http://127.0.0.1:{closed.getsockname()[1]}/x"
        closed.close()
        async with served(kernel(home, fake_llm, url)) as (_, adapter, _):
            refused = await adapter.send("c", "four")
            assert (refused.success, refused.retryable) == (False, True)
            assert SECRET not in (refused.error or "")

    asyncio.run(scenario())


def test_settings_from_the_environment(home, fake_llm):
    from hermes_agent.builtin_plugins.gateway.platforms import build_adapters

    config = {"model": {"provider": "custom", "base_url": fake_llm.openai_base_url}}
    k = make_kernel(home, config=config, builtins=True, env={
        "HERMES_HOME": str(home), "WEBHOOK_ENABLED": "true", "WEBHOOK_SECRET": SECRET,
        "WEBHOOK_HOST": "127.0.0.1", "WEBHOOK_PORT": "9912",
        "WEBHOOK_REPLY_URL": "https://user:pw@example.test/hooks/replies?token=abc"})
    adapters, _, problems = build_adapters(k)
    assert not problems
    settings = adapters["webhook"].settings
    assert (settings.host, settings.port, settings.path, settings.secret) == (
        "127.0.0.1", 9912, "/webhook", SECRET)
    assert settings.reply_target == "https://example.test/hooks/replies"
    assert SECRET not in repr(settings)

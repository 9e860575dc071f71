"""The api-server platform, started by a real gateway runner on a free loopback port and
driven with the real ``openai`` SDK; the agent behind it talks to the fake model server."""

from __future__ import annotations

import asyncio
import contextlib
import json
import urllib.error
import urllib.request
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from hermes_agent.testing import make_kernel
from hermes_agent.testing.fake_llm import FakeLLMServer, reply_text, reply_tool_call

from .conftest import serving

pytest.importorskip("starlette", reason="the api-server needs starlette: "
                    "pip install 'hermes-agent-runtime[platform-api-server]'")
pytest.importorskip("uvicorn", reason="the api-server needs uvicorn: "
                    "pip install 'hermes-agent-runtime[platform-api-server]'")
openai = pytest.importorskip("openai")

KEY = "sk-test-api-server-key"
WAIT = 30.0


def adder(ctx: Any) -> None:
    ctx.register_tool("add", "testing", {
        "name": "add", "description": "Add two numbers.",
        "parameters": {"type": "object", "properties": {
            "a": {"type": "number"}, "b": {"type": "number"}}}},
        lambda args, **_: json.dumps({"sum": args["a"] + args["b"]}))
adder.__name__ = "adder"


def kernel(home: Path, server: FakeLLMServer, env: dict[str, str] | None = None,
           **section: Any) -> Any:
    config = {"model": {"provider": "custom", "base_url": server.openai_base_url,
                        "default": "fake-model", "max_retries": 0},
              "sessions": {"auto_title": False},
              "platforms": {"api_server": {"enabled": True, "port": 0, **section}}}
    return make_kernel(home, config=config, builtins=True, plugins=[adder],
                       env={"HERMES_HOME": str(home), "API_SERVER_KEY": KEY, **(env or {})})


@contextlib.asynccontextmanager
async def served(kernel: Any) -> AsyncIterator[tuple[Any, Any]]:
    """A started gateway with the api_server platform (see ``conftest.serving``)."""
    async with serving(kernel, "api_server") as (runner, adapter):
        yield runner, f"http://127.0.0.1:{adapter.port}"


def http(method: str, url: str, body: Any = None) -> tuple[int, Any]:
    """A plain request without a key (urllib, in a thread): its status and JSON body."""
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data, method=method,
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=WAIT) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def posts(server: FakeLLMServer) -> list[Any]:
    return [r for r in server.requests if r.method == "POST"]


def client(base: str, key: str = KEY) -> Any:
    return openai.AsyncOpenAI(base_url=f"{base}/v1", api_key=key, max_retries=0, timeout=WAIT)


async def streamed(api: Any, text: str, session: str) -> tuple[str, list[Any]]:
    stream = await api.chat.completions.create(
        model="hermes-agent", messages=[{"role": "user", "content": text}], stream=True,
        extra_headers={"X-Hermes-Session": session})
    chunks = [chunk async for chunk in stream]
    return "".join(c.choices[0].delta.content or "" for c in chunks if c.choices), chunks


def test_a_streamed_multi_turn_conversation_with_a_tool_call(home, fake_llm):
    fake_llm.script(reply_tool_call("add", {"a": 2, "b": 3}), reply_text("2 + 3 = 5"),
                    reply_text("and doubled, 10"))
    k = kernel(home, fake_llm)

    async def scenario() -> None:
        async with served(k) as (runner, base):
            api = client(base)
            first, chunks = await streamed(api, "what is 2 + 3?", "conv-1")
            assert first == "2 + 3 = 5"
            assert chunks[0].choices[0].delta.role == "assistant"
            assert chunks[-1].choices[0].finish_reason == "stop"
            second, _ = await streamed(api, "and doubled?", "conv-1")
            assert second == "and doubled, 10"
            assert list(runner.chats) == ["api_server:conv-1"]

    asyncio.run(scenario())
    first_turn, second_turn = posts(fake_llm)[0], posts(fake_llm)[-1]
    assert "add" in json.dumps(first_turn.body.get("tools", []))
    history = second_turn.body["messages"]
    assert [m["content"] for m in history if m["role"] == "user"] == [
        "what is 2 + 3?", "and doubled?"]
    assert any(m["role"] == "tool" and '"sum": 5' in m["content"] for m in history)
    assert any(m["role"] == "assistant" and m.get("content") == "2 + 3 = 5" for m in history)


def test_non_streamed_and_the_user_field_names_the_chat(home, fake_llm):
    fake_llm.script(reply_text("hello alice"), reply_text("hello again"), reply_text("hi bob"))
    k = kernel(home, fake_llm)

    async def scenario() -> None:
        async with served(k) as (runner, base):
            api = client(base)

            async def ask(user: str, text: str) -> Any:
                return await api.chat.completions.create(
                    model="hermes-agent", user=user,
                    messages=[{"role": "system", "content": "ignored"},
                              {"role": "user", "content": text}])

            answer = await ask("alice", "hi")
            assert answer.object == "chat.completion"
            assert answer.choices[0].message.content == "hello alice"
            assert (await ask("alice", "again")).choices[0].message.content == "hello again"
            assert (await ask("bob", "hi")).choices[0].message.content == "hi bob"
            assert sorted(runner.chats) == ["api_server:alice", "api_server:bob"]

    asyncio.run(scenario())
    assert len(posts(fake_llm)[1].body["messages"]) > len(posts(fake_llm)[2].body["messages"])


def test_a_missing_or_wrong_key_gets_401_and_nothing_reaches_the_model(home, fake_llm):
    k = kernel(home, fake_llm)

    async def scenario() -> None:
        async with served(k) as (_, base):
            for key in ("wrong-key", ""):
                with pytest.raises(openai.AuthenticationError):
                    await client(base, key or "x").chat.completions.create(
                        model="m", messages=[{"role": "user", "content": "hi"}],
                        extra_headers={} if key else {"Authorization": ""})
            status, body = await asyncio.to_thread(http, "POST", f"{base}/v1/chat/completions", {
                "model": "m", "messages": [{"role": "user", "content": "hi"}]})
            assert status == 401 and "API_SERVER_KEY" in body["error"]["message"]
            assert (await asyncio.to_thread(http, "GET", f"{base}/v1/models"))[0] == 401

    asyncio.run(scenario())
    assert posts(fake_llm) == []


def test_models_and_health(home, fake_llm):
    k = kernel(home, fake_llm)

    async def scenario() -> None:
        async with served(k) as (_, base):
            models = await client(base).models.list()
            assert [m.id for m in models.data] == ["hermes-agent"]
            status, health = await asyncio.to_thread(http, "GET", f"{base}/health")
            assert status == 200 and health["status"] == "ok"

    asyncio.run(scenario())


def test_loopback_without_a_key_only_when_allowed(home, fake_llm):
    fake_llm.script(reply_text("open"))
    k = kernel(home, fake_llm, env={"API_SERVER_KEY": ""}, allow_unauthenticated_loopback=True)

    async def scenario() -> None:
        async with served(k) as (_, base):
            answer = await client(base, "anything").chat.completions.create(
                model="m", messages=[{"role": "user", "content": "hi"}])
            assert answer.choices[0].message.content == "open"

    asyncio.run(scenario())


@pytest.mark.parametrize("section", [{"host": "0.0.0.0"},
                                     {"host": "0.0.0.0", "allow_unauthenticated_loopback": True},
                                     {}])
def test_refuses_to_start_without_a_key(home, fake_llm, section):
    from hermes_agent.builtin_plugins.gateway.platforms import build_adapters

    k = kernel(home, fake_llm, env={"API_SERVER_KEY": ""}, **section)
    adapters, _, problems = build_adapters(k)
    assert adapters == {}
    [problem] = problems
    assert "API_SERVER_KEY" in problem and "allow_unauthenticated_loopback" in problem


def test_enabled_from_the_environment(home, fake_llm):
    from hermes_agent.builtin_plugins.gateway.platforms import build_adapters

    config = {"model": {"provider": "custom", "base_url": fake_llm.openai_base_url}}
    k = make_kernel(home, config=config, builtins=True, env={
        "HERMES_HOME": str(home), "API_SERVER_ENABLED": "true", "API_SERVER_KEY": KEY,
        "API_SERVER_HOST": "127.0.0.1", "API_SERVER_PORT": "9911"})
    adapters, _, problems = build_adapters(k)
    assert not problems
    settings = adapters["api_server"].settings
    assert (settings.host, settings.port, settings.key) == ("127.0.0.1", 9911, KEY)
    assert KEY not in repr(settings)


def test_an_allow_list_applies_to_the_user_field(home, fake_llm):
    fake_llm.script(reply_text("hi alice"))
    k = kernel(home, fake_llm, allowed_users=["alice"])

    async def scenario() -> None:
        async with served(k) as (_, base):
            api = client(base)
            refused = await api.chat.completions.create(
                model="m", user="mallory", messages=[{"role": "user", "content": "hi"}])
            assert "not allowed" in refused.choices[0].message.content
            assert posts(fake_llm) == []
            allowed = await api.chat.completions.create(
                model="m", user="alice", messages=[{"role": "user", "content": "hi"}])
            assert allowed.choices[0].message.content == "hi alice"

    asyncio.run(scenario())


def test_a_request_a_plugin_skips_is_answered_at_once(home, fake_llm):
    def skipper(ctx: Any) -> None:
        ctx.register_hook("pre_gateway_dispatch",
                          lambda event, **_: {"action": "skip", "reason": "spam"}
                          if "spam" in event.text else None)
    skipper.__name__ = "skipper"
    config = {"model": {"provider": "custom", "base_url": fake_llm.openai_base_url,
                        "default": "fake-model", "max_retries": 0},
              "sessions": {"auto_title": False},
              "platforms": {"api_server": {"enabled": True, "port": 0,
                                           "request_timeout": WAIT * 4}}}
    k = make_kernel(home, config=config, builtins=True, plugins=[skipper],
                    env={"HERMES_HOME": str(home), "API_SERVER_KEY": KEY})

    async def scenario() -> None:
        async with served(k) as (runner, base):
            answer = await client(base).chat.completions.create(
                model="hermes-agent", user="alice",
                messages=[{"role": "user", "content": "buy spam now"}])
            assert answer.choices[0].message.content == ""
            assert runner.chats == {}

    asyncio.run(scenario())  # the client's timeout (WAIT) is shorter than the request's
    assert posts(fake_llm) == []


def test_a_streamed_reply_arrives_as_the_model_writes_it(home, fake_llm):
    fake_llm.script(reply_tool_call("add", {"a": 1, "b": 1}, text="Let me add."),
                    reply_text("one and one make two", chunk_size=4))
    k = kernel(home, fake_llm)

    async def scenario() -> None:
        async with served(k) as (_, base):
            text, chunks = await streamed(client(base), "1 + 1?", "conv-s")
            pieces = [c.choices[0].delta.content for c in chunks
                      if c.choices and c.choices[0].delta.content]
            assert text == "Let me add.\n\none and one make two"
            assert len(pieces) > 5  # piece by piece, not one chunk at the end

    asyncio.run(scenario())


def test_a_kept_alive_connection_is_not_delayed_between_requests(home, fake_llm):
    """Without TCP_NODELAY a response's body waits for the client's delayed acknowledgement
    of its headers: about 40 ms per request on a connection kept open."""
    import time

    import httpx2

    k = kernel(home, fake_llm)

    async def scenario() -> list[float]:
        async with served(k) as (_, base):
            async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {KEY}"}) as http:
                durations = []
                for _ in range(6):
                    began = time.perf_counter()
                    assert (await http.get(f"{base}/v1/models")).status_code == 200
                    durations.append(time.perf_counter() - began)
                return durations

    durations = asyncio.run(scenario())
    assert sorted(durations[1:])[2] < 0.030  # the median request on the open connection


def test_the_conversation_field_names_the_chat(home, fake_llm):
    fake_llm.script(reply_text("noted"), reply_text("you said 7"))
    k = kernel(home, fake_llm)

    async def scenario() -> None:
        async with served(k) as (runner, base):
            api = client(base)
            for text in ("remember 7", "what did I say?"):
                await api.chat.completions.create(
                    model="hermes-agent", messages=[{"role": "user", "content": text}],
                    extra_body={"conversation": "conv-42"})
            assert list(runner.chats) == ["api_server:conv-42"]

    asyncio.run(scenario())
    assert [m["content"] for m in posts(fake_llm)[-1].body["messages"]
            if m["role"] == "user"] == ["remember 7", "what did I say?"]


def test_completions_keep_their_method_and_body_checks(home, fake_llm):
    """POST /v1/chat/completions goes straight to its handler, past the app's routing; a GET
    there is still refused and a body that is not JSON still gets the API's 400."""
    k = kernel(home, fake_llm)

    def send(method: str, url: str, data: bytes | None) -> tuple[int, bytes]:
        request = urllib.request.Request(url, data, method=method,
                                         headers={"Authorization": f"Bearer {KEY}"})
        try:
            with urllib.request.urlopen(request, timeout=WAIT) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read()

    async def scenario() -> None:
        async with served(k) as (_, base):
            url = f"{base}/v1/chat/completions"
            assert (await asyncio.to_thread(send, "GET", url, None))[0] == 405
            status, body = await asyncio.to_thread(send, "POST", url, b"{not json")
            assert status == 400 and json.loads(body)["error"]["message"] == "The body must be JSON."

    asyncio.run(scenario())
    assert posts(fake_llm) == []

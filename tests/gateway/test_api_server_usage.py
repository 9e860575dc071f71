"""The api-server with the real ``openai`` SDK: a completion reports the turn's real token
usage (summed over its model calls; streamed too, with ``stream_options.include_usage``), and
an unknown path or a wrong method gets an OpenAI-style JSON error."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from hermes_agent.testing.fake_llm import FakeLLMServer, reply_text, reply_tool_call

from .test_api_server import client, http, kernel, served

openai = pytest.importorskip("openai")


def test_a_completion_reports_the_turns_usage(home: Path, fake_llm: FakeLLMServer) -> None:
    fake_llm.script(reply_tool_call("add", {"a": 1, "b": 2}, usage={"input_tokens": 100,
                                                                     "output_tokens": 7}),
                    reply_text("three", usage={"input_tokens": 120, "output_tokens": 5}),
                    reply_text("streamed", usage={"input_tokens": 40, "output_tokens": 3}))

    async def scenario() -> tuple[object, list[object]]:
        async with served(kernel(home, fake_llm)) as (_runner, base):
            api = client(base)
            done = await api.chat.completions.create(
                model="hermes-agent", messages=[{"role": "user", "content": "1+2?"}])
            stream = await api.chat.completions.create(
                model="hermes-agent", messages=[{"role": "user", "content": "again"}],
                stream=True, stream_options={"include_usage": True})
            return done, [chunk async for chunk in stream]

    done, chunks = asyncio.run(scenario())
    assert done.choices[0].message.content == "three"
    assert (done.usage.prompt_tokens, done.usage.completion_tokens,
            done.usage.total_tokens) == (220, 12, 232)  # both model calls of the turn
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "streamed"
    last = chunks[-1]
    assert last.choices == [] and (last.usage.prompt_tokens, last.usage.completion_tokens,
                                   last.usage.total_tokens) == (40, 3, 43)
    assert all(c.usage is None for c in chunks[:-1])


def test_unknown_paths_and_wrong_methods_get_json_errors(home: Path,
                                                         fake_llm: FakeLLMServer) -> None:
    async def scenario() -> None:
        async with served(kernel(home, fake_llm)) as (_runner, base):
            with pytest.raises(openai.NotFoundError) as missing:
                await client(base).responses.create(model="hermes-agent", input="hi")
            assert missing.value.status_code == 404
            assert missing.value.body["code"] == "not_found"
            assert "/v1/chat/completions" in missing.value.body["message"]
            status, body = await asyncio.to_thread(http, "GET", f"{base}/v1/chat/completions")
            assert status == 405 and body["error"]["code"] == "method_not_allowed"
            assert set(body["error"]) >= {"message", "type", "code"} and "POST" in \
                body["error"]["message"]
            status, body = await asyncio.to_thread(http, "GET", f"{base}/nothing/here")
            assert status == 404 and body["error"]["type"] == "invalid_request_error"

    asyncio.run(scenario())

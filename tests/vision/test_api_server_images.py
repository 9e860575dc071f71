"""Images sent to the api-server with the real ``openai`` SDK (``image_url`` parts: a data
URL, or a URL the agent fetches under the web SSRF policy) reach the scripted model as image
content in the provider's wire format, in each API mode."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from hermes_agent.testing.fake_llm import FakeLLMServer, reply_text

from .support import (MODES, ImageSite, agent_kernel, data_url, image_bytes, mode_settings, png,
                      sent_images, serving)

pytest.importorskip("starlette", reason="the api-server needs starlette: "
                    "pip install 'hermes-agent-runtime[platform-api-server]'")
pytest.importorskip("uvicorn", reason="the api-server needs uvicorn: "
                    "pip install 'hermes-agent-runtime[platform-api-server]'")
openai = pytest.importorskip("openai")

KEY = "sk-test-api-server-key"


def kernel(home: Path, llm: FakeLLMServer, mode: str, **config: Any) -> Any:
    model, env = mode_settings(mode, llm)
    return agent_kernel(home, model, {"API_SERVER_KEY": KEY, **env},
                        platforms={"api_server": {"enabled": True, "port": 0}}, **config)


async def ask(kernel: Any, url: str, text: str = "What is in the picture?") -> str:
    async with serving(kernel, "api_server") as (_, adapter):
        api = openai.AsyncOpenAI(base_url=f"http://127.0.0.1:{adapter.port}/v1", api_key=KEY,
                                 max_retries=0, timeout=30.0)
        reply = await api.chat.completions.create(model="hermes-agent", messages=[
            {"role": "user", "content": [{"type": "text", "text": text},
                                         {"type": "image_url", "image_url": {"url": url}}]}])
        await api.close()
        return reply.choices[0].message.content or ""


@pytest.mark.parametrize("mode", MODES)
def test_a_data_url_image_reaches_the_model(tmp_path: Path, fake_llm: FakeLLMServer,
                                            mode: str) -> None:
    picture = png(8, 6)
    fake_llm.script(reply_text("A red rectangle."))
    answer = asyncio.run(ask(kernel(tmp_path / "home", fake_llm, mode), data_url(picture)))
    assert answer == "A red rectangle."
    request = fake_llm.posts()[-1]
    [block] = sent_images(request)
    assert image_bytes(block, request.style) == picture


def test_an_image_url_on_a_private_address_is_refused_by_default(
        tmp_path: Path, fake_llm: FakeLLMServer) -> None:
    with ImageSite(png()) as site:
        fake_llm.script(reply_text("I got no image."))
        asyncio.run(ask(kernel(tmp_path / "home", fake_llm, "chat_completions"), site.url))
        assert site.hits == 0
    request = fake_llm.posts()[-1]
    assert sent_images(request) == []
    users = [m for m in request.body["messages"] if m["role"] == "user"]
    assert "[image not attached: cannot fetch the image" in str(users[-1]["content"])


@pytest.mark.parametrize("mode", MODES)
def test_an_image_url_is_fetched_when_the_web_policy_allows_it(
        tmp_path: Path, fake_llm: FakeLLMServer, mode: str) -> None:
    picture = png(2, 9)
    with ImageSite(picture) as site:
        fake_llm.script(reply_text("Tall and red."))
        home = tmp_path / "home"
        asyncio.run(ask(kernel(home, fake_llm, mode, web={"allow_private_networks": True}),
                        site.url))
        assert site.hits == 1
    request = fake_llm.posts()[-1]
    [block] = sent_images(request)
    assert image_bytes(block, request.style) == picture
    assert [p.read_bytes() for p in (home / "images").iterdir()] == [picture]

"""A photo (and an image sent as a file) on the fake Telegram Bot API reaches the scripted
model as image content in the provider's wire format, in each API mode, through a real
gateway runner and the real provider plugins."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_agent.testing.fake_llm import FakeLLMServer, reply_text
from hermes_agent.testing.fake_telegram import FakeTelegram

from .support import MODES, agent_kernel, image_bytes, mode_settings, png, sent_images, serving

ALICE = 1001


@pytest.fixture
def telegram() -> Iterator[FakeTelegram]:
    with FakeTelegram() as fake:
        yield fake


def kernel(home: Path, llm: FakeLLMServer, telegram: FakeTelegram, mode: str) -> Any:
    model, env = mode_settings(mode, llm)
    return agent_kernel(home, model, {"TELEGRAM_BOT_TOKEN": telegram.token,
                                      "TELEGRAM_ALLOWED_USERS": str(ALICE), **env},
                        gateway={"stream_replies": False},
                        platforms={"telegram": {"enabled": True, "base_url": telegram.base_url,
                                                "poll_timeout": 5}})


async def answered(kernel: Any, telegram: FakeTelegram, send: Any) -> str:
    async with serving(kernel, "telegram"):
        send()
        [reply] = await asyncio.to_thread(telegram.wait_sent, 1, ALICE, 30.0)
        return reply.plain


@pytest.mark.parametrize("mode", MODES)
def test_a_photo_reaches_the_model_as_an_image(tmp_path: Path, fake_llm: FakeLLMServer,
                                               telegram: FakeTelegram, mode: str) -> None:
    picture = png(12, 8)
    fake_llm.script(reply_text("A red photo."))
    reply = asyncio.run(answered(kernel(tmp_path / "home", fake_llm, telegram, mode), telegram,
                                 lambda: telegram.user_photo(ALICE, ALICE, picture,
                                                             caption="what is it?",
                                                             width=12, height=8)))
    assert reply == "A red photo."
    request = fake_llm.posts()[-1]
    [block] = sent_images(request)
    assert image_bytes(block, request.style) == picture  # the largest size, not the thumbnail
    assert "what is it?" in str(request.body)
    assert telegram.requests("getFile")


def test_an_image_file_without_a_caption_is_a_message(tmp_path: Path, fake_llm: FakeLLMServer,
                                                      telegram: FakeTelegram) -> None:
    picture = png(30, 20)
    fake_llm.script(reply_text("A screenshot."))
    asyncio.run(answered(kernel(tmp_path / "home", fake_llm, telegram, "chat_completions"),
                         telegram, lambda: telegram.user_document(
                             ALICE, ALICE, picture, file_name="shot.png",
                             mime_type="image/png")))
    request = fake_llm.posts()[-1]
    [block] = sent_images(request)
    assert image_bytes(block, request.style) == picture


def test_an_unknown_senders_photo_is_not_downloaded(tmp_path: Path, fake_llm: FakeLLMServer,
                                                    telegram: FakeTelegram) -> None:
    stranger = 6666
    k = kernel(tmp_path / "home", fake_llm, telegram, "chat_completions")

    async def scenario() -> str:
        async with serving(k, "telegram"):
            telegram.user_photo(stranger, stranger, png(), caption="look", width=3, height=2)
            [refusal] = await asyncio.to_thread(telegram.wait_sent, 1, stranger, 30.0)
            return refusal.plain

    assert "not allowed" in asyncio.run(scenario())
    assert telegram.requests("getFile") == [] and fake_llm.posts() == []

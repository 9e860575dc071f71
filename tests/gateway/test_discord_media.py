"""Voice and images on Discord, end to end: a voice message (flag IS_VOICE_MESSAGE, an Ogg
attachment on the fake's CDN path) is downloaded without the bot token, transcribed by the
fake OpenAI-compatible endpoint, and its text feeds the turn; the spoken reply and a
generated image go back as attachments (multipart ``files[0]`` beside ``payload_json``)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from hermes_agent.testing.fake_llm import reply_text, reply_tool_call
from hermes_agent.testing.fake_media import PNG, FakeMediaAPI

pytest.importorskip("websockets", reason="the Discord platform needs websockets: "
                    "pip install 'hermes-agent-runtime[platform-discord]'")

from .test_discord import discord, kernel, served, texts, until  # noqa: E402

__all__ = ["discord"]  # the fixture, imported for the tests here
VOICE_NOTE = b"OggS\x00\x02" + bytes(22) + b"\x13OpusHead\x01\x01" + bytes(64)


@pytest.fixture
def media():
    with FakeMediaAPI() as fake:
        yield fake


def media_kernel(home: Any, llm: Any, fake: Any, media: FakeMediaAPI, mode: str) -> Any:
    k = kernel(home, llm, fake, env={"VOICE_TOOLS_OPENAI_KEY": media.key,
                                     "OPENAI_API_KEY": media.key})
    k.config.data.update({
        "stt": {"provider": "openai", "openai": {"base_url": media.openai_base_url}},
        "tts": {"provider": "openai", "openai": {"base_url": media.openai_base_url}},
        "voice": {"reply_mode": mode},
        "image_gen": {"provider": "openai", "openai": {"base_url": media.openai_base_url}}})
    return k


def test_a_voice_message_is_transcribed_and_answered_with_an_audio_attachment(
        home, fake_llm, discord, media):
    media.transcript = "remind me to water the plants"
    fake_llm.script(reply_text("I will remind you."))
    k = media_kernel(home, fake_llm, discord, media, "voice_only")

    async def scenario() -> None:
        async with served(k):
            discord.user_voice("400", "111", VOICE_NOTE, username="alice")
            await until(discord, lambda: texts(discord, "400"))
            [(channel, upload)] = await until(discord, lambda: discord.uploads)
            assert channel == "400" and upload.filename == "voice-message.ogg"
            assert upload.content.startswith(b"OggS") and b"OpusHead" in upload.content
            [voice] = await until(discord, lambda: [m for m in discord.sent_to("400")
                                                    if m["attachments"]])
            assert voice["flags"] == 8192 and voice["content"] == ""  # a voice message

    asyncio.run(scenario())
    [request] = [r for r in fake_llm.requests if r.method == "POST"]
    said = [m["content"] for m in request.body["messages"] if m["role"] == "user"]
    assert said == ["[voice message, transcribed] remind me to water the plants"]
    [download] = discord.downloads
    assert "authorization" not in download.headers  # the CDN never sees the bot token
    assert media.uploads()[0]["file"].content == VOICE_NOTE


def test_a_generated_image_is_attached_to_the_channel(home, fake_llm, discord, media):
    fake_llm.script(reply_tool_call("image_generate", {"prompt": "a boat"}),
                    reply_text("Your boat."))
    k = media_kernel(home, fake_llm, discord, media, "off")

    async def scenario() -> None:
        async with served(k):
            discord.user_says("401", "111", "draw a boat", username="alice")
            [(channel, upload)] = await until(discord, lambda: discord.uploads)
            assert channel == "401" and upload.content == PNG
            assert upload.filename.endswith(".png") and upload.content_type == "image/png"
            assert "Your boat." in texts(discord, "401")

    asyncio.run(scenario())


def test_a_channel_refusing_voice_messages_gets_the_audio_as_a_file(home, fake_llm, discord,
                                                                    media):
    discord.refuse_voice = True
    fake_llm.script(reply_text("Spoken anyway."))
    k = media_kernel(home, fake_llm, discord, media, "all")

    async def scenario() -> None:
        async with served(k):
            discord.user_says("402", "111", "say something", username="alice")
            [(channel, upload)] = await until(discord, lambda: discord.uploads)
            assert channel == "402" and upload.filename.startswith("tts_")
            [sent] = await until(discord, lambda: [m for m in discord.sent_to("402")
                                                   if m["attachments"]])
            assert "flags" not in sent

    asyncio.run(scenario())
    refused = [r for r in discord.requests if r.method == "POST" and "multipart" in
               r.headers.get("content-type", "")]
    assert len(refused) == 2  # the voice message, refused, then the file

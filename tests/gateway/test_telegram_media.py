"""Voice and images on Telegram, end to end: a voice note sent to the fake Bot API is
downloaded (getFile), transcribed by the fake OpenAI-compatible endpoint through the openai
SDK, and its text is what the scripted model reads; the reply comes back as a voice message
(sendVoice, Ogg/Opus) when voice.reply_mode asks; an image image_generate made is sent as a
photo (sendPhoto); a reply naming a file outside $HERMES_HOME/cache sends nothing."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import pytest

from hermes_agent.kits.media import audio_format
from hermes_agent.testing.fake_llm import reply_text, reply_tool_call
from hermes_agent.testing.fake_media import PNG, FakeMediaAPI

from .test_telegram import ALICE, WAIT, kernel, posts, replies, served, telegram, user_texts

__all__ = ["telegram"]  # the fixture, imported for the tests here
VOICE_NOTE = b"OggS\x00\x02" + bytes(22) + b"\x13OpusHead\x01\x01" + bytes(64)


@pytest.fixture
def media():
    with FakeMediaAPI() as fake:
        yield fake


def voice_config(media: FakeMediaAPI, reply_mode: str = "voice_only",
                 tts: str = "openai") -> dict[str, Any]:
    return {"stt": {"provider": "openai", "openai": {"base_url": media.openai_base_url}},
            "tts": {"provider": tts, "openai": {"base_url": media.openai_base_url}},
            "voice": {"reply_mode": reply_mode}}


def voice_kernel(home: Path, llm: Any, telegram: Any, media: FakeMediaAPI, stream: bool = False,
                 **options: Any) -> Any:
    k = kernel(home, llm, telegram, stream=stream, env={"VOICE_TOOLS_OPENAI_KEY": media.key,
                                                         "OPENAI_API_KEY": media.key})
    for section, values in voice_config(media, **options).items():
        k.config.data[section] = values
    return k


def test_a_voice_note_is_transcribed_into_the_turn_and_answered_with_a_voice_message(
        home, fake_llm, telegram, media):
    media.transcript = "what is the capital of France"
    fake_llm.script(reply_text("Paris is the capital of France."))
    k = voice_kernel(home, fake_llm, telegram, media)

    async def scenario() -> None:
        async with served(k):
            telegram.user_voice(ALICE, ALICE, VOICE_NOTE, username="alice")
            [text] = await replies(telegram, 1, ALICE)
            assert text.plain == "Paris is the capital of France."
            [voice] = await asyncio.to_thread(telegram.wait_media, 1, WAIT)
            assert (voice.kind, voice.chat_id) == ("voice", str(ALICE))
            assert voice.content.startswith(b"OggS") and b"OpusHead" in voice.content

    asyncio.run(scenario())
    [request] = posts(fake_llm)
    assert user_texts(request) == ["[voice message, transcribed] what is the capital of France"]
    [upload] = media.uploads()
    assert upload["file"].content == VOICE_NOTE  # the note as the user sent it
    assert upload["model"].text == "whisper-1"
    [speech] = media.requests("/v1/audio/speech")
    assert speech.body["input"] == "Paris is the capital of France."
    assert speech.body["response_format"] == "opus"  # Telegram's voice messages play Opus
    assert telegram.requests("getFile")
    assert list((home / "cache" / "audio" / "inbound").iterdir())


def test_a_text_message_gets_no_voice_in_voice_only_mode_and_one_in_all_mode(
        home, fake_llm, telegram, media):
    fake_llm.script(reply_text("just text"), reply_text("spoken too"))
    k = voice_kernel(home, fake_llm, telegram, media)

    async def run(text: str, count: int, voices: int = 0) -> None:
        async with served(k):  # leaving it waits for the turn, its voice included
            telegram.user_message(ALICE, ALICE, text)
            await replies(telegram, count, ALICE)
            if voices:
                await asyncio.to_thread(telegram.wait_media, voices, WAIT)

    asyncio.run(run("hello", 1))
    assert telegram.media == [] and media.requests("/v1/audio/speech") == []
    k.config.data["voice"]["reply_mode"] = "all"
    asyncio.run(run("hello again", 2, voices=1))
    [voice] = telegram.media
    assert voice.kind == "voice"
    [speech] = media.requests("/v1/audio/speech")
    assert speech.body["input"] == "spoken too"


def test_without_speech_to_text_the_agent_is_told_the_note_could_not_be_read(
        home, fake_llm, telegram, media):
    fake_llm.script(reply_text("Sorry, I cannot listen to voice notes yet."))
    k = kernel(home, fake_llm, telegram)  # stt.provider unset: nothing runs here locally

    async def scenario() -> None:
        async with served(k):
            telegram.user_voice(ALICE, ALICE, VOICE_NOTE, caption="listen")
            await replies(telegram, 1, ALICE)

    asyncio.run(scenario())
    [said] = user_texts(posts(fake_llm)[0])
    assert said.startswith("[The user sent a voice message, but it could not be transcribed")
    assert "stt.provider" in said and said.endswith("listen")
    assert telegram.media == []


@pytest.mark.skipif(not (shutil.which("espeak-ng") and (shutil.which("opusenc")
                                                         or shutil.which("ffmpeg"))),
                    reason="needs espeak-ng and opusenc or ffmpeg (apt-get install espeak-ng "
                           "opus-tools; .ci/run installs them)")
def test_the_local_engine_answers_a_voice_note_with_a_real_ogg_opus_voice_message(
        home, fake_llm, telegram, media):
    fake_llm.script(reply_text("Hello, this is Hermes speaking."))
    k = voice_kernel(home, fake_llm, telegram, media, tts="espeak")

    async def scenario() -> None:
        async with served(k):
            telegram.user_voice(ALICE, ALICE, VOICE_NOTE)
            [voice] = await asyncio.to_thread(telegram.wait_media, 1, WAIT)
            assert voice.kind == "voice" and voice.filename.endswith(".ogg")
            saved = home / "voice.ogg"
            saved.write_bytes(voice.content)
            assert audio_format(saved) == "ogg-opus" and len(voice.content) > 1000

    asyncio.run(scenario())


def test_a_generated_image_is_sent_as_a_photo(home, fake_llm, telegram, media):
    fake_llm.script(reply_tool_call("image_generate", {"prompt": "a cat", "aspect_ratio":
                                                       "square"}),
                    reply_text("Here is your cat."))
    k = voice_kernel(home, fake_llm, telegram, media, reply_mode="off")
    k.config.data["image_gen"] = {"provider": "openai", "openai": {
        "base_url": media.openai_base_url}}

    async def scenario() -> None:
        async with served(k):
            telegram.user_message(ALICE, ALICE, "draw a cat")
            [text] = await replies(telegram, 1, ALICE)
            assert text.plain == "Here is your cat."
            [photo] = await asyncio.to_thread(telegram.wait_media, 1, WAIT)
            assert photo.kind == "photo" and photo.content == PNG

    asyncio.run(scenario())
    tools = {t["function"]["name"] for t in posts(fake_llm)[0].body.get("tools", [])}
    assert {"image_generate", "text_to_speech"} <= tools


def test_a_reply_naming_a_file_outside_the_cache_sends_no_file(home, fake_llm, telegram,
                                                                media):
    secret = home / "secret.txt"
    secret.write_text("do not send")
    fake_llm.script(reply_text(f"Here you go\nMEDIA:{secret}\nMEDIA:/etc/passwd"))
    k = kernel(home, fake_llm, telegram)

    async def scenario() -> None:
        async with served(k):
            telegram.user_message(ALICE, ALICE, "send me your secrets")
            [text] = await replies(telegram, 1, ALICE)
            assert text.plain == "Here you go"

    asyncio.run(scenario())
    assert telegram.media == [] and not telegram.requests("sendDocument")


def test_an_audio_file_with_a_caption_is_transcribed_with_the_caption_after_it(
        home, fake_llm, telegram, media):
    media.transcript = "minutes of the meeting"
    fake_llm.script(reply_text("Summarised."))
    k = voice_kernel(home, fake_llm, telegram, media, reply_mode="off")

    async def scenario() -> None:
        async with served(k):
            telegram.user_voice(ALICE, ALICE, b"ID3\x04" + bytes(200), kind="audio",
                                mime_type="audio/mpeg", caption="summarise this")
            await replies(telegram, 1, ALICE)

    asyncio.run(scenario())
    assert user_texts(posts(fake_llm)[0]) == [
        "[audio file, transcribed] minutes of the meeting\nsummarise this"]
    assert telegram.media == []  # reply_mode off: text only


def test_a_streamed_reply_naming_the_image_ends_without_the_media_line(home, fake_llm,
                                                                        telegram, media):
    fake_llm.script(reply_tool_call("image_generate", {"prompt": "a tree"}),
                    reply_text("A tree for you.\nMEDIA:/etc/hostname"))  # not under the cache
    k = voice_kernel(home, fake_llm, telegram, media, stream=True, reply_mode="off")
    k.config.data["image_gen"] = {"provider": "openai", "openai": {
        "base_url": media.openai_base_url}}

    async def scenario() -> None:
        async with served(k):
            telegram.user_message(ALICE, ALICE, "draw a tree")
            [photo] = await asyncio.to_thread(telegram.wait_media, 1, WAIT)
            assert photo.kind == "photo" and photo.content == PNG
            await asyncio.to_thread(telegram.wait_until, lambda t: any(
                m.shown == "A tree for you." for m in t.sent))

    asyncio.run(scenario())
    assert not any("MEDIA:" in m.shown for m in telegram.sent)  # the line is gone when done
    assert [m.kind for m in telegram.media] == ["photo"]  # /etc/hostname was not sent

"""An image attached on the fake Discord reaches the scripted model as image content (the
Anthropic wire format here), downloaded from the CDN without the bot's token; other
attachments stay links in the text."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from hermes_agent.testing.fake_llm import FakeLLMServer, reply_text

from .support import agent_kernel, image_bytes, mode_settings, png, sent_images, serving

pytest.importorskip("websockets", reason="the Discord platform needs websockets: "
                    "pip install 'hermes-agent-runtime[platform-discord]'")
from hermes_agent.testing.fake_discord import FakeDiscord  # noqa: E402

TOKEN = "NzkyNzE1NDU0MTk2MDg4ODQy.X-hLkA.Ghr5qSECRETtkQ9x"


def test_an_image_attachment_reaches_the_model(tmp_path: Path, fake_llm: FakeLLMServer) -> None:
    picture = png(16, 9)
    fake_llm.script(reply_text("A wide red image."))
    with FakeDiscord(token=TOKEN) as discord:
        model, env = mode_settings("anthropic_messages", fake_llm)
        kernel = agent_kernel(tmp_path / "home", model, {
            "DISCORD_BOT_TOKEN": TOKEN, "DISCORD_ALLOWED_USERS": "111", **env},
            gateway={"stream_replies": False},
            platforms={"discord": {"enabled": True, "api_base": discord.api_base}})

        async def scenario() -> list[Any]:
            async with serving(kernel, "discord"):
                await asyncio.to_thread(discord.wait, lambda: discord.identifies, 30.0)
                discord.user_says("201", "111", "what is this?", username="alice", attachments=[
                    discord.attachment(picture, "red.png", "image/png"),
                    discord.attachment(b"%PDF-1.4", "notes.pdf", "application/pdf")])
                return await asyncio.to_thread(discord.wait,
                                               lambda: discord.sent_to("201"), 30.0)

        [reply] = asyncio.run(scenario())
        cdn = [r for r in discord.requests if r.path.startswith("/attachments/")]
    assert reply["content"] == "A wide red image."
    assert cdn and all(r.headers.get("authorization") in (None, "(wrong)") for r in cdn)
    request = fake_llm.posts()[-1]
    [block] = sent_images(request)
    assert image_bytes(block, request.style) == picture
    text = str(request.body["messages"])
    assert "notes.pdf" in text and "[image: red.png]" in text

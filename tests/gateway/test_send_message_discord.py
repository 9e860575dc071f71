"""send_message on Discord, through a real gateway runner and the fake Discord: a named
channel, a thread (``discord:<channel>:<thread>``) and a home channel are reached through the
REST API; a channel nobody allowed is not."""

from __future__ import annotations

import asyncio
import json

import pytest

from hermes_agent.testing.fake_llm import reply_text, reply_tool_call

pytest.importorskip("websockets", reason="the Discord platform needs websockets: "
                    "pip install 'hermes-agent-runtime[platform-discord]'")

from .test_discord import discord, kernel, served, texts, until  # noqa: E402,F401 (fixture)


def test_send_message_reaches_discord_channels_and_threads(home, fake_llm, discord) -> None:
    fake_llm.script(
        reply_tool_call("send_message", {"target": "discord", "message": "home post"}),
        reply_tool_call("send_message", {"target": "discord:#ops", "message": "ops post"}),
        reply_tool_call("send_message", {"target": "discord:#standup", "message": "in thread"}),
        reply_tool_call("send_message", {"target": "discord:999", "message": "leak"}),
        reply_text("done"))
    k = kernel(home, fake_llm, discord, home_channel="300",
               channels={"ops": "600", "standup": "500:501"})

    async def scenario() -> None:
        async with served(k):
            discord.user_says("201", "111", "post the updates", username="alice")
            assert await until(discord, lambda: texts(discord, "201")) == ["done"]

    asyncio.run(scenario())
    assert texts(discord, "300") == ["home post"]
    assert texts(discord, "600") == ["ops post"]
    assert texts(discord, "501") == ["in thread"]  # the thread, not its parent
    assert texts(discord, "500") == [] and texts(discord, "999") == []
    posts = [r for r in fake_llm.requests if r.method == "POST"]
    results = [json.loads(m["content"]) for m in posts[-1].body["messages"]
               if m["role"] == "tool"]
    assert [r.get("success", False) for r in results] == [True, True, True, False]
    assert results[2]["target"] == "discord:500:501"
    assert "not a chat hermes may send to" in results[3]["error"]

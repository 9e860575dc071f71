"""The Discord platform, started by a real gateway runner against the fake Discord (gateway
websocket and REST API on 127.0.0.1); the agent behind it talks to the fake model server."""

from __future__ import annotations

import asyncio
import json
import contextlib
import logging
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest

from hermes_agent.api import session_store
from hermes_agent.testing import make_kernel
from hermes_agent.testing.fake_llm import FakeLLMServer, reply_text

pytest.importorskip("websockets", reason="the Discord platform needs websockets: "
                    "pip install 'hermes-agent-runtime[platform-discord]'")
from hermes_agent.testing.fake_discord import FakeDiscord  # noqa: E402

from .conftest import serving

TOKEN = "NzkyNzE1NDU0MTk2MDg4ODQy.X-hLkA.Ghr5qSECRETtkQ9x"
WAIT = 30.0
T = TypeVar("T")
GUILD_MESSAGES, DIRECT_MESSAGES, MESSAGE_CONTENT = 1 << 9, 1 << 12, 1 << 15


@pytest.fixture
def discord() -> Any:
    with FakeDiscord(token=TOKEN, heartbeat_interval_ms=1000) as fake:
        yield fake


def kernel(home: Path, llm: FakeLLMServer, fake: FakeDiscord, env: dict[str, str] | None = None,
           stream: bool = False, **section: Any) -> Any:
    """Replies are sent whole unless ``stream`` (a streamed reply is edited as it grows)."""
    config = {"model": {"provider": "custom", "base_url": llm.openai_base_url,
                        "default": "fake-model", "max_retries": 0},
              "sessions": {"auto_title": False}, "gateway": {"stream_replies": stream},
              "platforms": {"discord": {"enabled": True, "api_base": fake.api_base,
                                        "reconnect_delay": 0.05, "invalid_session_delay": 0.05,
                                        "connect_timeout": WAIT, **section}}}
    return make_kernel(home, config=config, builtins=True, env={
        "HERMES_HOME": str(home), "DISCORD_BOT_TOKEN": TOKEN,
        "DISCORD_ALLOWED_USERS": "111,bob", **(env or {})})


@contextlib.asynccontextmanager
async def served(kernel: Any) -> AsyncIterator[tuple[Any, Any]]:
    """A started gateway with the discord platform (see ``conftest.serving``)."""
    async with serving(kernel, "discord") as (runner, adapter):
        yield runner, adapter


async def until(fake: FakeDiscord, predicate: Callable[[], T]) -> T:
    return await asyncio.to_thread(fake.wait, predicate, WAIT)


def texts(fake: FakeDiscord, channel: str) -> list[str]:
    return [m["content"] for m in fake.sent_to(channel)]


def leaks(secret: str, text: str) -> bool:
    """Whether any 8 characters of ``secret`` appear in ``text`` (a log may elide the rest)."""
    return any(secret[i:i + 8] in text for i in range(len(secret) - 7))


def user_posts(llm: FakeLLMServer, text: str) -> int:
    """How many model requests ended with the user message ``text``."""
    return sum(1 for r in llm.requests if r.method == "POST"
               and r.body["messages"][-1] == {"role": "user", "content": text})


async def settled(fake: FakeDiscord) -> int:
    """The session's last sequence number, once the bot acknowledged it in a heartbeat."""
    assert fake.gateway is not None and fake.gateway.session is not None
    session = fake.gateway.session
    await until(fake, lambda: fake.heartbeats and fake.heartbeats[-1] == session.seq)
    return session.seq


def test_identify_with_the_intents_then_heartbeats_with_the_last_sequence(home, fake_llm,
                                                                           discord):
    k = kernel(home, fake_llm, discord)

    async def scenario() -> None:
        async with served(k) as (_, adapter):
            [identify] = discord.identifies
            for intent in (GUILD_MESSAGES, DIRECT_MESSAGES, MESSAGE_CONTENT):
                assert identify["intents"] & intent
            assert await until(discord, lambda: len(discord.heartbeats) >= 2)
            assert set(discord.heartbeats) == {1}  # READY was s=1, nothing after it
            assert adapter.gateway.session_id == discord.gateway.session.id

    asyncio.run(scenario())
    gateway_bot = [r for r in discord.requests if r.path.endswith("/gateway/bot")]
    assert gateway_bot and gateway_bot[0].headers["authorization"] == "Bot ***"
    assert discord.connections == ["/?v=10&encoding=json"]


def test_two_users_in_two_channels_get_their_own_sessions(home, fake_llm, discord):
    fake_llm.script(reply_text("hello there"), reply_text("hello there"))
    k = kernel(home, fake_llm, discord)

    async def scenario() -> None:
        async with served(k) as (runner, _):
            discord.user_says("201", "111", "hi from a DM", username="alice")
            discord.user_says("202", "222", "hi from a guild", username="bob", guild_id="7")
            assert await until(discord, lambda: texts(discord, "201")) == ["hello there"]
            assert await until(discord, lambda: texts(discord, "202")) == ["hello there"]
            assert sorted(runner.chats) == ["discord:201", "discord:202"]
            assert runner.chats["discord:201"].agent.session_id != (
                runner.chats["discord:202"].agent.session_id)

    asyncio.run(scenario())
    assert len(session_store(k).list_sessions(source="discord")) == 2
    system = fake_llm.requests[-1].body["messages"][0]
    assert system["role"] == "system" and "Discord markdown works, tables do not" in (
        system["content"])
    # the bot's own messages came back on the gateway and were not answered
    assert len([r for r in fake_llm.requests if r.method == "POST"]) == 2


def test_unknown_users_are_refused_and_other_guilds_ignored(home, fake_llm, discord):
    fake_llm.script(reply_text("welcome"))
    k = kernel(home, fake_llm, discord, allowed_guilds=["7"])

    async def scenario() -> None:
        async with served(k) as (runner, _):
            discord.user_says("301", "999", "let me in", username="mallory")
            [refusal] = await until(discord, lambda: texts(discord, "301"))
            assert "not allowed" in refusal and "999" in refusal
            discord.user_says("302", "111", "from another guild", guild_id="8")
            discord.user_says("303", "111", "from a bot", bot=True)
            mention = f"<@{discord.bot_user['id']}>"
            discord.user_says("304", "111", f"{mention} from the allowed guild", guild_id="7")
            assert await until(discord, lambda: texts(discord, "304")) == ["welcome"]
            assert texts(discord, "302") == texts(discord, "303") == []  # handled in order
            assert list(runner.chats) == ["discord:304"]

    asyncio.run(scenario())
    assert user_posts(fake_llm, "from the allowed guild") == 1
    assert len([r for r in fake_llm.requests if r.method == "POST"]) == 1
    assert [row for row in session_store(k).list_sessions(source="discord")
            if "mallory" in str(row)] == []
    assert len(session_store(k).list_sessions(source="discord")) == 1


def test_a_dropped_connection_is_resumed_and_the_missed_message_delivered_once(
        home, fake_llm, discord, caplog):
    caplog.set_level(logging.DEBUG)
    fake_llm.script(reply_text("first answer"), reply_text("answer after the drop"))
    k = kernel(home, fake_llm, discord)

    async def scenario() -> None:
        async with served(k) as (_, adapter):
            discord.user_says("401", "111", "before the drop")
            assert await until(discord, lambda: texts(discord, "401")) == ["first answer"]
            seq = await settled(discord)  # READY, the question, the bot's own answer
            session_id = discord.gateway.session.id
            discord.drop(hold=True)  # reconnects wait until release()
            discord.user_says("401", "111", "sent during the drop")
            discord.release()
            [resume] = await until(discord, lambda: discord.resumes)
            assert resume == {"session_id": session_id, "seq": seq}
            assert await until(discord, lambda: texts(discord, "401")[1:]) == [
                "answer after the drop"]
            await settled(discord)
            assert adapter.gateway.session_id == session_id

    asyncio.run(scenario())
    assert discord.connections == ["/?v=10&encoding=json", "/resume/?v=10&encoding=json"]
    assert len(discord.identifies) == 1
    assert user_posts(fake_llm, "sent during the drop") == 1
    assert texts(discord, "401") == ["first answer", "answer after the drop"]
    assert not leaks(TOKEN, caplog.text)
    assert "resum" in caplog.text.lower()


def test_reconnect_request_resumes_and_an_invalid_session_identifies_anew(home, fake_llm,
                                                                          discord):
    fake_llm.script(reply_text("still here"))
    k = kernel(home, fake_llm, discord)

    async def scenario() -> None:
        async with served(k):
            first = discord.gateway.session.id
            discord.request_reconnect()  # op 7
            [resume] = await until(discord, lambda: discord.resumes)
            assert resume["session_id"] == first
            await until(discord, lambda: discord.gateway.live)  # resumed
            discord.invalidate_session(resumable=False)  # op 9, d=false
            await until(discord, lambda: len(discord.identifies) == 2)
            await until(discord, lambda: discord.gateway.session.id != first
                        and discord.gateway.live)
            discord.user_says("501", "111", "are you there?")
            assert await until(discord, lambda: texts(discord, "501")) == ["still here"]

    asyncio.run(scenario())


def test_a_resume_of_an_expired_session_identifies_anew(home, fake_llm, discord):
    fake_llm.script(reply_text("new session, same chat"))
    k = kernel(home, fake_llm, discord)

    async def scenario() -> None:
        async with served(k):
            first = discord.gateway.session.id
            discord.expire_sessions()
            discord.drop()
            await until(discord, lambda: len(discord.identifies) == 2 and discord.gateway.live)
            assert [r["session_id"] for r in discord.resumes] == [first]  # refused with op 9
            assert discord.gateway.session.id != first
            discord.user_says("551", "111", "still there?")
            assert await until(discord, lambda: texts(discord, "551")) == [
                "new session, same chat"]

    asyncio.run(scenario())


def test_a_missed_heartbeat_ack_reconnects_and_resumes(home, fake_llm, discord):
    k = kernel(home, fake_llm, discord)

    async def scenario() -> None:
        async with served(k):
            discord.set_ack_heartbeats(False)
            [resume] = await until(discord, lambda: discord.resumes)
            assert resume["session_id"] == discord.gateway.session.id
            discord.set_ack_heartbeats(True)

    asyncio.run(scenario())


def test_a_rate_limited_send_is_retried_without_duplicates(home, fake_llm, discord):
    fake_llm.script(reply_text("worth the wait"))
    k = kernel(home, fake_llm, discord)

    async def scenario() -> None:
        async with served(k):
            discord.rate_limit(times=1, retry_after=0.05)
            discord.user_says("601", "111", "hello")
            assert await until(discord, lambda: texts(discord, "601")) == ["worth the wait"]

    asyncio.run(scenario())
    sends = [r for r in discord.requests
             if r.method == "POST" and r.path.endswith("/channels/601/messages")]
    assert len(sends) == 2 and sends[0].body == sends[1].body
    assert texts(discord, "601") == ["worth the wait"]


def test_a_server_error_is_retried_and_a_403_is_not(home, fake_llm, discord, caplog):
    fake_llm.script(reply_text("after a 500"), reply_text("refused"), reply_text("delivered"))
    k = kernel(home, fake_llm, discord)

    def sends(channel: str) -> list[Any]:
        return [r for r in discord.requests
                if r.method == "POST" and r.path.endswith(f"/channels/{channel}/messages")]

    async def scenario() -> None:
        async with served(k):
            discord.fail_sends(500)
            discord.user_says("611", "111", "hello")
            assert await until(discord, lambda: texts(discord, "611")) == ["after a 500"]
            discord.fail_sends(403)
            discord.user_says("612", "111", "hello again")
            discord.user_says("612", "111", "and again")  # answered after the first, in order
            assert await until(discord, lambda: texts(discord, "612")) == ["delivered"]

    asyncio.run(scenario())
    assert len(sends("611")) == 2
    assert [r.body["content"] for r in sends("612")] == ["refused", "delivered"]
    assert "HTTP 403: Missing Permissions" in caplog.text


def test_without_websockets_the_platform_is_skipped_with_the_install_hint(
        home, fake_llm, discord, monkeypatch):
    from hermes_agent.builtin_plugins.gateway.platforms import build_adapters

    monkeypatch.setitem(sys.modules, "websockets", None)  # as if not installed
    adapters, _, [problem] = build_adapters(kernel(home, fake_llm, discord))
    assert adapters == {} and "pip install 'hermes-agent-runtime[platform-discord]'" in problem


def test_a_long_reply_is_split_at_2000_characters(home, fake_llm, discord):
    paragraphs = [f"Paragraph {i}: " + "word " * 60 for i in range(20)]
    answer = "\n\n".join(p.strip() for p in paragraphs)
    fake_llm.script(reply_text(answer))
    k = kernel(home, fake_llm, discord)

    async def scenario() -> None:
        async with served(k):
            question = discord.user_says("701", "111", "tell me a lot")
            pieces = await until(discord, lambda: (
                m := discord.sent_to("701")) and "Paragraph 19" in m[-1]["content"] and m)
            assert len(pieces) >= 3
            assert all(len(p["content"]) <= 2000 for p in pieces)
            assert "\n\n".join(p["content"] for p in pieces) == answer
            assert pieces[0]["message_reference"]["message_id"] == question
            assert all("message_reference" not in p for p in pieces[1:])

    asyncio.run(scenario())


@pytest.mark.parametrize("via", ["gateway", "rest"])
def test_a_bad_token_stops_with_a_clear_error(home, fake_llm, discord, caplog, via):
    from hermes_agent.builtin_plugins.gateway.platforms import build_adapters
    from hermes_agent.builtin_plugins.gateway.runner import GatewayRunner

    caplog.set_level(logging.DEBUG)
    wrong = "OTk5OTk5.Y-wRoNg.ZzSECRETqq7"
    section = {"gateway_url": discord.gateway_url} if via == "gateway" else {}
    k = kernel(home, fake_llm, discord, env={"DISCORD_BOT_TOKEN": wrong}, **section)

    async def scenario() -> None:
        adapters, entries, problems = build_adapters(k)
        assert not problems
        runner = GatewayRunner(k, adapters, entries=entries)
        assert await runner.start() == []
        assert "DISCORD_BOT_TOKEN" in adapters["discord"].fatal
        await runner.stop(WAIT)

    asyncio.run(scenario())
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert any("DISCORD_BOT_TOKEN" in e and ("4004" in e or "401" in e) for e in errors)
    assert not leaks(wrong, caplog.text) and not leaks(TOKEN, caplog.text)
    if via == "gateway":
        assert discord.identifies and not discord.resumes  # no retrying with a refused token
    assert fake_llm.requests == []


def test_a_token_in_config_yaml_is_refused(home, fake_llm, discord):
    from hermes_agent.builtin_plugins.gateway.platforms import build_adapters

    k = kernel(home, fake_llm, discord, token="in-the-config")
    adapters, _, [problem] = build_adapters(k)
    assert adapters == {} and "DISCORD_BOT_TOKEN" in problem and "in-the-config" not in problem


def test_a_thread_is_its_own_chat_and_replies_go_to_the_thread(home, fake_llm, discord):
    fake_llm.script(reply_text("in the thread"))
    k = kernel(home, fake_llm, discord)

    async def scenario() -> None:
        async with served(k) as (runner, adapter):
            discord.create_thread("802", parent_id="801", guild_id="7")
            discord.user_says("802", "111", "a threaded question", guild_id="7")
            assert await until(discord, lambda: texts(discord, "802")) == ["in the thread"]
            assert list(runner.chats) == ["discord:801:802"]
            info = await adapter.get_chat_info("802")
            assert info.type == "thread" and info["parent_id"] == "801"

    asyncio.run(scenario())
    assert texts(discord, "801") == []


def test_typing_and_edits_reach_discord(home, fake_llm, discord):
    fake_llm.script(reply_text("typed"))
    k = kernel(home, fake_llm, discord)

    async def scenario() -> None:
        async with served(k) as (_, adapter):
            discord.user_says("901", "111", "hi")
            [sent] = await until(discord, lambda: discord.sent_to("901"))
            assert "901" in discord.typing
            edited = await adapter.edit_message("901", sent["id"], "edited")
            assert edited.success and texts(discord, "901") == ["edited"]

    asyncio.run(scenario())


def test_a_streamed_reply_is_one_message_edited_into_the_answer(home, fake_llm, discord,
                                                                 monkeypatch):
    from hermes_agent.kits.chat_text import EditedReply

    monkeypatch.setattr(EditedReply, "interval", 0.0)
    fake_llm.script(reply_text("#### Streaming\n\nworks, piece by piece.", chunk_size=5))
    k = kernel(home, fake_llm, discord, stream=True)
    final = "**Streaming**\n\nworks, piece by piece."

    async def scenario() -> str:
        async with served(k):
            question = discord.user_says("951", "111", "stream please")
            await until(discord, lambda: texts(discord, "951") == [final])
            return question

    question = asyncio.run(scenario())
    [message] = discord.sent_to("951")
    assert message["message_reference"]["message_id"] == question
    assert [r for r in discord.requests if r.method == "PATCH"]  # it grew by edits
    assert [r.body["content"] for r in discord.requests if r.method == "POST"
            and r.path.endswith("/channels/951/messages")] != [final]  # first words sent


def test_format_message_adapts_what_discord_does_not_render(home, fake_llm, discord):
    from hermes_agent.builtin_plugins.gateway.platforms import build_adapters

    adapter = build_adapters(kernel(home, fake_llm, discord))[0]["discord"]
    formatted = adapter.format_message(
        "#### Deep heading\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n## Kept")
    assert formatted.splitlines() == ["**Deep heading**", "", "```", "| a | b |", "|---|---|",
                                      "| 1 | 2 |", "```", "", "## Kept"]
    code = "```\n#### not a heading\n| x |\n```"
    assert adapter.format_message(code) == code


def test_a_token_revoked_while_running_drops_the_platform_with_the_reason(home, fake_llm,
                                                                          discord):
    k = kernel(home, fake_llm, discord)

    async def scenario() -> None:
        async with served(k) as (runner, adapter):
            assert k.hooks.fire("platform_adapter", name="discord") is adapter
            discord.token = "a-new-token"  # revoked: the resume is refused with 4004
            discord.drop()
            deadline = asyncio.get_running_loop().time() + WAIT
            while "discord" not in runner.failed:  # the fake has nothing to signal here
                assert asyncio.get_running_loop().time() < deadline
                await asyncio.sleep(0.02)
            assert "DISCORD_BOT_TOKEN" in runner.failed["discord"]
            assert k.hooks.fire("platform_adapter", name="discord") is None
            state_file = home / "gateway" / "state.json"
            while "discord" not in json.loads(state_file.read_text()).get("failed_platforms", {}):
                assert asyncio.get_running_loop().time() < deadline  # rewritten within 0.25 s
                await asyncio.sleep(0.02)
            assert json.loads(state_file.read_text())["platforms"] == []

    asyncio.run(scenario())

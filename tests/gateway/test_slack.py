"""The Slack platform, started by a real gateway runner against the fake Slack (Web API,
Socket Mode websocket and signed Events API POSTs on 127.0.0.1, in Slack's wire formats);
the agent behind it talks to the fake model server."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest

from hermes_agent.api import InboundMessage, session_store
from hermes_agent.testing import make_kernel
from hermes_agent.testing.fake_llm import FakeLLMServer, reply_text, reply_tool_call

pytest.importorskip("slack_sdk", reason="the Slack platform needs slack-sdk: "
                    "pip install 'hermes-agent-runtime[platform-slack]'")
pytest.importorskip("aiohttp", reason="slack-sdk's asyncio clients need aiohttp: "
                    "pip install 'hermes-agent-runtime[platform-slack]'")
pytest.importorskip("websockets", reason="the fake Slack's Socket Mode server needs websockets")
from hermes_agent.testing.fake_slack import FakeSlack  # noqa: E402

from .conftest import serving  # noqa: E402

WAIT = 30.0
T = TypeVar("T")
ALICE, BOB, MALLORY = "U0ALICE1", "U0BOB002", "U0MALLRY"
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 64


@pytest.fixture
def slack() -> Any:
    with FakeSlack(bot_token="xoxb-1-secret-bot-token", app_token="xapp-1-secret-app-token",
                   signing_secret="8f742231b10e8888abcd99yyyzzz85a5") as fake:
        yield fake


def kernel(home: Path, llm: FakeLLMServer, fake: FakeSlack, env: dict[str, str] | None = None,
           stream: bool = False, plugins: list[Any] | None = None, **section: Any) -> Any:
    config = {"model": {"provider": "custom", "base_url": llm.openai_base_url,
                        "default": "fake-model", "max_retries": 0},
              "sessions": {"auto_title": False}, "gateway": {"stream_replies": stream},
              "platforms": {"slack": {"enabled": True, "api_base": fake.api_base,
                                      "connect_timeout": WAIT, **section}}}
    return make_kernel(home, config=config, builtins=True, plugins=plugins or [], env={
        "HERMES_HOME": str(home), "SLACK_BOT_TOKEN": fake.bot_token,
        "SLACK_APP_TOKEN": fake.app_token, "SLACK_ALLOWED_USERS": f"{ALICE},{BOB}",
        **(env or {})})


@contextlib.asynccontextmanager
async def served(kernel: Any) -> AsyncIterator[tuple[Any, Any]]:
    async with serving(kernel, "slack") as (runner, adapter):
        yield runner, adapter


async def until(fake: FakeSlack, predicate: Callable[[], T]) -> T:
    return await asyncio.to_thread(fake.wait, predicate, WAIT)


async def polled(predicate: Callable[[], bool]) -> None:
    """Until ``predicate()`` (state outside the fake Slack, checked every 20 ms)."""
    deadline = time.monotonic() + WAIT
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.02)


def text_of(content: Any) -> str:
    """A user message's text, whether sent as a string or as parts (text and images)."""
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content if p.get("type") == "text")
    return str(content)


def model_posts(llm: FakeLLMServer) -> list[Any]:
    return [r for r in llm.requests if r.method == "POST"]


def recorder(seen: list[Any]) -> Callable[[Any], None]:
    """A plugin recording every message the gateway is handed (``pre_gateway_dispatch``)."""
    def register(ctx: Any) -> None:
        ctx.register_hook("pre_gateway_dispatch", lambda event, **_: seen.append(event))
    register.__name__ = "slack_recorder"
    return register


def test_two_users_in_two_chats_get_their_own_sessions(home, fake_llm, slack):
    fake_llm.script(reply_text("hello alice"), reply_text("hello bob"))
    k = kernel(home, fake_llm, slack)

    async def scenario() -> str:
        async with served(k) as (runner, adapter):
            assert slack.connections and slack.connections[0].startswith("/link/?ticket=")
            slack.user_says("D0ALICE", ALICE, "hi from a DM")
            assert await until(slack, lambda: slack.texts("D0ALICE")) == ["hello alice"]
            asked = slack.user_says("C0GENERAL", BOB, "hi from a channel",
                                    channel_type="channel", mention=True)
            assert await until(slack, lambda: slack.texts("C0GENERAL")) == ["hello bob"]
            assert set(runner.chats) == {"slack:C0GENERAL:" + asked, "slack:D0ALICE"}
            sessions = {key: chat.agent.session_id for key, chat in runner.chats.items()}
            assert len(set(sessions.values())) == 2
            # every envelope acknowledged, the bot's own echoed messages included
            await until(slack, lambda: not slack.unacked)
            return asked

    asked = asyncio.run(scenario())
    [dm] = slack.sent_to("D0ALICE")
    assert "thread_ts" not in dm  # a DM is answered in the DM
    [in_channel] = slack.sent_to("C0GENERAL")
    assert in_channel["thread_ts"] == asked  # a channel message is answered in its thread
    assert len(session_store(k).list_sessions(source="slack")) == 2
    posts = model_posts(fake_llm)
    assert len(posts) == 2  # the bot's own messages came back and were not answered
    # the bot's mention is taken out, and both the message and app_mention events (one
    # message) were answered once
    assert posts[1].body["messages"][-1] == {"role": "user", "content": "hi from a channel"}
    system = posts[0].body["messages"][0]["content"]
    assert "You are chatting on Slack" in system
    auth = [r for r in slack.requests if r.path.endswith("/auth.test")]
    assert auth and auth[0].headers["authorization"] == "Bearer ***"


def test_a_thread_is_its_own_session_and_followups_need_no_mention(home, fake_llm, slack):
    fake_llm.script(reply_text("first"), reply_text("second"), reply_text("elsewhere"),
                    reply_text("after the restart"))

    async def scenario() -> str:
        async with served(kernel(home, fake_llm, slack)) as (runner, _):
            root = slack.user_says("C0OPS", ALICE, "start", channel_type="channel", mention=True)
            await until(slack, lambda: slack.texts("C0OPS", root) == ["first"])
            slack.user_says("C0OPS", ALICE, "no mention, but in the thread",
                            channel_type="channel", thread_ts=root)
            await until(slack, lambda: slack.texts("C0OPS", root) == ["first", "second"])
            slack.user_says("C0OPS", ALICE, "chatter without a mention", channel_type="channel")
            slack.user_says("C0OPS", ALICE, "a thread it is not in", channel_type="channel",
                            thread_ts="1600000000.000001")
            other = slack.user_says("C0OPS", BOB, "again", channel_type="channel", mention=True)
            await until(slack, lambda: slack.texts("C0OPS", other) == ["elsewhere"])
            assert set(runner.chats) == {f"slack:C0OPS:{other}", f"slack:C0OPS:{root}"}
        return root

    root = asyncio.run(scenario())

    async def restarted() -> None:  # a new gateway still follows the thread
        async with served(kernel(home, fake_llm, slack)):
            slack.user_says("C0OPS", ALICE, "still here?", channel_type="channel",
                            thread_ts=root)
            await until(slack, lambda: len(slack.texts("C0OPS", root)) == 3)

    asyncio.run(restarted())
    posts = model_posts(fake_llm)
    assert [m["content"] for m in posts[1].body["messages"] if m["role"] == "user"] == [
        "start", "no mention, but in the thread"]  # one session for the thread
    assert len(posts) == 4  # the unmentioned channel chatter was not answered
    assert [m["content"] for m in posts[3].body["messages"] if m["role"] == "user"] == [
        "start", "no mention, but in the thread", "still here?"]


def test_bang_commands_work_where_slack_keeps_slash_for_itself(home, fake_llm, slack):
    fake_llm.script(reply_text("one"), reply_text("two"))
    k = kernel(home, fake_llm, slack)

    async def scenario() -> None:
        async with served(k) as (runner, _):
            root = slack.user_says("C0OPS", ALICE, "hi", channel_type="channel", mention=True)
            await until(slack, lambda: slack.texts("C0OPS", root) == ["one"])
            first = runner.chats[f"slack:C0OPS:{root}"].agent.session_id
            slack.user_says("C0OPS", ALICE, "!new", channel_type="channel", thread_ts=root)
            await until(slack, lambda: len(slack.texts("C0OPS", root)) == 2)
            assert slack.texts("C0OPS", root)[1] == "Started a new conversation."
            slack.user_says("C0OPS", ALICE, "!nice work", channel_type="channel",
                            thread_ts=root)
            await until(slack, lambda: len(slack.texts("C0OPS", root)) == 3)
            assert runner.chats[f"slack:C0OPS:{root}"].agent.session_id != first

    asyncio.run(scenario())
    last = model_posts(fake_llm)[-1].body["messages"]
    assert [m["content"] for m in last if m["role"] == "user"] == ["!nice work"]


def test_an_unknown_user_is_refused_and_nothing_is_stored(home, fake_llm, slack):
    k = kernel(home, fake_llm, slack)

    async def scenario() -> None:
        async with served(k) as (runner, _):
            photo = slack.add_file("secret.png", PNG, "image/png")
            slack.user_says("D0MALLORY", MALLORY, "let me in", files=[photo])
            [refusal] = await until(slack, lambda: slack.texts("D0MALLORY"))
            assert "not allowed" in refusal and MALLORY in refusal
            slack.user_says("C0GENERAL", MALLORY, "me too", channel_type="channel",
                            mention=True)
            await until(slack, lambda: slack.texts("C0GENERAL"))
            await until(slack, lambda: not slack.unacked)  # refused is still acknowledged
            assert runner.chats == {}

    asyncio.run(scenario())
    assert model_posts(fake_llm) == []
    assert session_store(k).list_sessions(source="slack") == []
    assert not [r for r in slack.requests if r.path.startswith("/files/")]  # not downloaded
    assert not (home / "gateway" / "media").exists()


def test_a_long_reply_is_split_at_slacks_limit(home, fake_llm, slack):
    # ~10,000 characters each, no two words alike (the model client stops a looping reply)
    paragraphs = [" ".join(f"p{i}w{j}" for j in range(1500)) for i in range(9)]
    fake_llm.script(reply_text("\n\n".join(paragraphs), chunk_size=5000))
    k = kernel(home, fake_llm, slack)

    async def scenario() -> None:
        async with served(k):
            slack.user_says("D0ALICE", ALICE, "write a lot")
            await until(slack, lambda: len(slack.texts("D0ALICE")) >= 3)

    asyncio.run(scenario())
    pieces = slack.texts("D0ALICE")
    assert len(pieces) == 3 and all(len(p) <= 39000 for p in pieces)
    assert " ".join(" ".join(pieces).split()) == " ".join(" ".join(paragraphs).split())


def test_an_image_and_a_file_arrive_as_attachments(home, fake_llm, slack):
    fake_llm.script(reply_text("got them"))
    seen: list[Any] = []
    k = kernel(home, fake_llm, slack, plugins=[recorder(seen)], max_attachment_bytes=1000)

    async def scenario() -> None:
        async with served(k):
            photo = slack.add_file("photo.png", PNG, "image/png")
            notes = slack.add_file("notes.txt", b"line one\n", "text/plain")
            huge = slack.add_file("huge.bin", b"x" * 2000, "application/octet-stream")
            liar = slack.add_file("liar.bin", b"y" * 5000, "application/octet-stream", size=10)
            slack.user_says("D0ALICE", ALICE, "look at these",
                            files=[photo, notes, huge, liar])
            await until(slack, lambda: slack.texts("D0ALICE") == ["got them"])

    asyncio.run(scenario())
    [message] = seen
    image, text_file = message.attachments
    assert image["type"] == "image" and image["mime_type"] == "image/png"
    assert Path(image["path"]).read_bytes() == PNG and image["size"] == len(PNG)
    assert text_file["type"] == "file" and Path(text_file["path"]).read_bytes() == b"line one\n"
    assert Path(image["path"]).is_relative_to(home / "gateway" / "media" / "slack")
    downloads = [r for r in slack.requests if r.path.startswith("/files/")]
    assert {r.headers["authorization"] for r in downloads} == {"Bearer ***"}
    assert len(downloads) == 3  # the one declared too large was never fetched
    prompt = text_of(model_posts(fake_llm)[0].body["messages"][-1]["content"])
    assert prompt.startswith("look at these\n[image attached: photo.png (image/png")
    assert "huge.bin (2000 bytes) not downloaded" in prompt
    assert "liar.bin could not be downloaded" in prompt  # cut off at the limit
    assert not list(Path(image["path"]).parent.glob("*liar*"))


@pytest.mark.skipif(not hasattr(InboundMessage("x", "c", "u", "t"), "images"),
                    reason="this platform SDK has no image parts for the model yet")
def test_an_image_also_reaches_the_model_as_an_image_part(home, fake_llm, slack):
    fake_llm.script(reply_text("a picture"))
    seen: list[Any] = []
    k = kernel(home, fake_llm, slack, plugins=[recorder(seen)])
    k.config.data["model"]["supports_vision"] = True  # the fake model sees images

    async def scenario() -> None:
        async with served(k):
            photo = slack.add_file("photo.png", PNG, "image/png")
            slack.user_says("D0ALICE", ALICE, "what is this?", files=[photo])
            await until(slack, lambda: slack.texts("D0ALICE") == ["a picture"])

    asyncio.run(scenario())
    [message] = seen
    [part] = message.images
    assert part["type"] == "image_url" and part["image_url"]["url"] == (
        "data:image/png;base64," + base64.b64encode(PNG).decode())
    content = model_posts(fake_llm)[0].body["messages"][-1]["content"]
    assert [p["type"] for p in content if p["type"] != "text"] == ["image_url"]
    assert text_of(content).startswith("what is this?\n[image attached: photo.png")


def test_a_streamed_reply_is_one_message_edited_into_the_answer(home, fake_llm, slack,
                                                                 monkeypatch):
    from hermes_agent.kits.chat_text import EditedReply

    monkeypatch.setattr(EditedReply, "interval", 0.0)
    fake_llm.script(reply_text("**Streaming** works, piece by piece.", chunk_size=5))
    k = kernel(home, fake_llm, slack, stream=True)
    final = "*Streaming* works, piece by piece."

    async def scenario() -> None:
        async with served(k):
            slack.user_says("D0ALICE", ALICE, "stream please")
            await until(slack, lambda: slack.texts("D0ALICE") == [final])

    asyncio.run(scenario())
    [message] = slack.sent_to("D0ALICE")
    assert message.get("edited")
    posted = [r.body["text"] for r in slack.requests if r.path.endswith("/chat.postMessage")]
    assert posted and posted[0] != final  # the first words were posted, then edited
    assert [r for r in slack.requests if r.path.endswith("/chat.update")]


def test_a_rate_limited_post_is_sent_again_after_retry_after(home, fake_llm, slack):
    fake_llm.script(reply_text("eventually"))
    k = kernel(home, fake_llm, slack)

    async def scenario() -> None:
        async with served(k):
            slack.rate_limit(times=1, retry_after=1)
            slack.user_says("D0ALICE", ALICE, "hi")
            await until(slack, lambda: slack.texts("D0ALICE") == ["eventually"])

    asyncio.run(scenario())
    posts = [r for r in slack.requests if r.path.endswith("/chat.postMessage")]
    assert len(posts) == 2


def test_unacknowledged_events_come_again_on_a_new_connection_and_are_answered_once(
        home, fake_llm, slack):
    fake_llm.script(reply_text("one"), reply_text("two"))
    k = kernel(home, fake_llm, slack)

    async def scenario() -> None:
        async with served(k):
            slack.user_says("D0ALICE", ALICE, "first")
            await until(slack, lambda: slack.texts("D0ALICE") == ["one"])
            await until(slack, lambda: not slack.unacked)
            # as if the ack had been lost: the same envelope is sent again after a reconnect
            first = next(iter(slack.envelopes))
            with slack._changed:
                slack.acked.remove(first)
            slack.disconnect_app()
            await until(slack, lambda: len(slack.connections) == 2 and not slack.unacked)
            slack.user_says("D0ALICE", ALICE, "second")
            await until(slack, lambda: slack.texts("D0ALICE") == ["one", "two"])

    asyncio.run(scenario())
    assert len(model_posts(fake_llm)) == 2


def test_a_message_the_gateway_cannot_take_is_not_acknowledged(home, fake_llm, slack, gate):
    fake_llm.script(reply_tool_call("wait_gate"), reply_text("slow"), reply_text("queued"))
    seen: list[Any] = []

    def plugin(ctx: Any) -> None:
        recorder(seen)(ctx)
        ctx.register_tool("wait_gate", "testing", {
            "name": "wait_gate", "description": "Wait for the gate.",
            "parameters": {"type": "object", "properties": {}}}, gate.handler)
    plugin.__name__ = "slack_gate"
    k = kernel(home, fake_llm, slack, plugins=[plugin])

    async def scenario() -> None:
        async with serving(k, "slack", max_queue=1):
            slack.user_says("D0ALICE", ALICE, "one")
            await asyncio.to_thread(gate.entered.wait, WAIT)  # its turn is running
            slack.user_says("D0ALICE", ALICE, "two")
            slack.user_says("D0ALICE", ALICE, "three")  # the chat's queue is full
            await polled(lambda: len(seen) == 3)  # the gateway decided on all three
            gate.opened.set()
            await until(slack, lambda: slack.texts("D0ALICE") == ["slow", "queued"])
            events = [slack.envelopes[e]["payload"]["event"] for e in slack.unacked]
            assert [e["text"] for e in events if e["user"] == ALICE] == ["three"]

    asyncio.run(scenario())
    assert len(model_posts(fake_llm)) == 3  # one's two calls, two's one


def test_a_dropped_connection_is_opened_again(home, fake_llm, slack):
    fake_llm.script(reply_text("still here"))
    k = kernel(home, fake_llm, slack, ping_interval=1)

    async def scenario() -> None:
        async with served(k):
            slack.drop()
            await until(slack, lambda: len(slack.connections) >= 2)
            slack.user_says("D0ALICE", ALICE, "are you there?")
            await until(slack, lambda: slack.texts("D0ALICE") == ["still here"])

    asyncio.run(scenario())
    opened = [r for r in slack.requests if r.path.endswith("/apps.connections.open")]
    assert len(opened) == len(slack.connections) >= 2  # a fresh URL for each connection


# --- the Events API over HTTP ----------------------------------------------------------------

def http_kernel(home: Path, llm: FakeLLMServer, fake: FakeSlack, **section: Any) -> Any:
    return kernel(home, llm, fake, env={"SLACK_APP_TOKEN": "",
                                        "SLACK_SIGNING_SECRET": fake.signing_secret},
                  port=0, **section)


def test_events_over_http_are_verified_and_answered(home, fake_llm, slack):
    fake_llm.script(reply_text("signed and answered"))
    k = http_kernel(home, fake_llm, slack)

    async def scenario() -> None:
        async with served(k) as (runner, adapter):
            assert adapter.listen_url.endswith("/slack/events")
            slack.events_url = adapter.listen_url
            status, body = await asyncio.to_thread(slack.post_signed, json.dumps(
                {"type": "url_verification", "challenge": "c-123", "token": "x"}).encode())
            assert (status, json.loads(body)) == (200, {"challenge": "c-123"})
            event = {"type": "message", "channel": "D0ALICE", "user": ALICE,
                     "text": "over http", "ts": "1700000001.000100", "channel_type": "im"}
            payload = json.dumps({"type": "event_callback", "event_id": "Ev0HTTP1",
                                  "team_id": "T0FAKE", "event": event}).encode()
            forged = json.dumps({"type": "event_callback", "event_id": "Ev0FORGED",
                                 "event": {**event, "text": "forged", "ts": "1.2"}}).encode()
            stale = int(time.time()) - 301
            refused = [
                await asyncio.to_thread(slack.post_signed, forged, signature="v0=" + "0" * 64),
                await asyncio.to_thread(slack.post_signed, forged, timestamp=stale),
                await asyncio.to_thread(slack.post_signed, forged, signature=""),
                await asyncio.to_thread(slack.post_signed, forged, timestamp=0,
                                        signature="v0=abc")]
            assert [status for status, _ in refused] == [401, 401, 401, 401]
            assert (await asyncio.to_thread(slack.post_signed, payload))[0] == 200
            assert (await asyncio.to_thread(slack.post_signed, payload))[0] == 200  # a retry
            await until(slack, lambda: slack.texts("D0ALICE") == ["signed and answered"])
            assert list(runner.chats) == ["slack:D0ALICE"]

    asyncio.run(scenario())
    posts = model_posts(fake_llm)
    assert len(posts) == 1  # the retry was answered once, the forged ones never
    assert posts[0].body["messages"][-1]["content"] == "over http"
    assert not [r for r in slack.requests if r.path.endswith("apps.connections.open")]


def test_http_mode_refuses_to_start_without_the_signing_secret(home, fake_llm, slack):
    from hermes_agent.builtin_plugins.gateway.platforms import build_adapters

    k = kernel(home, fake_llm, slack, env={"SLACK_APP_TOKEN": ""}, mode="http")
    adapters, _, problems = build_adapters(k)
    assert "slack" not in adapters
    assert any("SLACK_SIGNING_SECRET" in str(p) for p in problems)


# --- settings and tokens ---------------------------------------------------------------------

@pytest.mark.parametrize(("env", "section", "says"), [
    ({"SLACK_BOT_TOKEN": ""}, {}, "set SLACK_BOT_TOKEN"),
    ({"SLACK_APP_TOKEN": ""}, {}, "set SLACK_APP_TOKEN"),
    ({}, {"bot_token": "xoxb-in-config"}, "do not put the bot_token in config.yaml"),
    ({}, {"extra": {"app_token": "xapp-in-config"}}, "set SLACK_APP_TOKEN"),
    ({}, {"mode": "rtm"}, "must be 'socket' or 'http'"),
    ({}, {"allow_bots": "some"}, "allow_bots must be one of"),
])
def test_settings_say_what_to_set(home, fake_llm, slack, env, section, says):
    from hermes_agent.builtin_plugins.gateway.platforms import build_adapters

    adapters, _, problems = build_adapters(kernel(home, fake_llm, slack, env=env, **section))
    assert "slack" not in adapters
    assert any(says in str(p) for p in problems), problems


def test_the_originals_top_level_slack_section_is_read(home, fake_llm, slack):
    from hermes_agent.builtin_plugins.gateway.platforms import build_adapters

    k = kernel(home, fake_llm, slack, allowed_channels="C0KEPT")
    k.config.data["slack"] = {"require_mention": False, "allowed_channels": ["C0LEGACY"],
                              "free_response_channels": "C0FREE"}
    settings = build_adapters(k)[0]["slack"].settings
    assert settings.require_mention is False
    assert settings.allowed_channels == frozenset({"C0KEPT"})  # platforms.slack wins
    assert settings.free_response_channels == frozenset({"C0FREE"})


@pytest.mark.parametrize(("variable", "wrong"), [("SLACK_APP_TOKEN", "xapp-wrong-token-value"),
                                               ("SLACK_BOT_TOKEN", "xoxb-wrong-token-value")])
def test_a_refused_token_stops_the_platform_naming_the_variable(home, fake_llm, slack, caplog,
                                                                variable, wrong):
    from hermes_agent.builtin_plugins.gateway.platforms import build_adapters
    from hermes_agent.builtin_plugins.gateway.runner import GatewayRunner

    k = kernel(home, fake_llm, slack, env={variable: wrong})

    async def scenario() -> list[str]:
        adapters, entries, _ = build_adapters(k)
        runner = GatewayRunner(k, adapters, entries=entries)
        try:
            return await runner.start()
        finally:
            await runner.stop(WAIT)

    assert asyncio.run(scenario()) == []
    assert f"Slack refused {variable}" in caplog.text
    for secret in (slack.bot_token, slack.app_token, wrong):
        assert secret not in caplog.text


def test_mrkdwn_and_the_home_channel(home, fake_llm, slack):
    from hermes_agent.builtin_plugins.gateway.platforms import build_adapters

    fake_llm.script()
    k = kernel(home, fake_llm, slack, env={"SLACK_HOME_CHANNEL": "C0HOME"})
    adapter = build_adapters(k)[0]["slack"]
    assert adapter.format_message("## Plan\n**bold** <b> & [docs](https://x.io/a?b=1&c=2)\n"
                                  "```py\nif a < b: pass\n```") == (
        "*Plan*\n*bold* &lt;b&gt; &amp; <https://x.io/a?b=1&amp;c=2|docs>\n"
        "```\nif a &lt; b: pass\n```")

    async def scenario() -> None:
        async with served(k) as (_, live):
            assert live.home_channel == "C0HOME"
            assert (await live.send("", "to the home channel")).success
            assert (await live.send("C0OPS:1700000000.000001", "into a thread")).success

    asyncio.run(scenario())
    assert slack.texts("C0HOME") == ["to the home channel"]
    assert slack.sent_to("C0OPS")[0]["thread_ts"] == "1700000000.000001"

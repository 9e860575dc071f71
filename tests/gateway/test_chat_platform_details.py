"""What each of WhatsApp, Signal and Mattermost does its own way, against its fake: Meta's
webhook handshake and signatures, Signal's groups and resumed event stream, Mattermost's
mentions, threads and streamed edits."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_agent.builtin_plugins.gateway.platforms import build_adapters
from hermes_agent.testing.fake_llm import FakeLLMServer, reply_text

from .chat_drivers import MattermostDriver, SignalDriver, WhatsAppDriver
from .conftest import serving
from .test_chat_platforms import kernel, posts, replies, say, user_contents

pytest.importorskip("websockets", reason="the Mattermost platform and its fake need websockets")
pytest.importorskip("starlette", reason="the WhatsApp webhook needs starlette and uvicorn")
WAIT = 30.0


@contextlib.asynccontextmanager
async def served(k: Any, driver: Any) -> AsyncIterator[tuple[Any, Any]]:
    async with serving(k, driver.platform) as (runner, adapter):
        await driver.ready()
        yield runner, adapter


# --- WhatsApp ------------------------------------------------------------------------------
@pytest.fixture
def whatsapp(home: Path) -> Iterator[WhatsAppDriver]:
    from hermes_agent.testing.fake_whatsapp import FakeWhatsApp

    with FakeWhatsApp() as fake:
        yield WhatsAppDriver(fake, home)


def test_whatsapp_answers_metas_handshake_only_with_the_verify_token(home, fake_llm, whatsapp):
    k = kernel(home, fake_llm, whatsapp)

    async def scenario() -> None:
        async with served(k, whatsapp):
            good = await asyncio.to_thread(whatsapp.fake.verify, whatsapp.url,
                                           whatsapp.verify_token, "4242")
            bad = await asyncio.to_thread(whatsapp.fake.verify, whatsapp.url, "guess", "4242")
            assert good == (200, "4242")
            assert bad[0] == 403 and "4242" not in bad[1]

    asyncio.run(scenario())


def test_whatsapp_refuses_unsigned_and_missigned_notifications(home, fake_llm, whatsapp):
    k = kernel(home, fake_llm, whatsapp)
    fake = whatsapp.fake

    async def scenario() -> None:
        async with served(k, whatsapp):
            note = fake.notification(whatsapp.ids["alice"], "hi")
            unsigned = await asyncio.to_thread(fake.deliver, whatsapp.url, note, signature=None)
            forged = await asyncio.to_thread(fake.deliver, whatsapp.url, note,
                                             signature="sha256=" + "0" * 64)
            other_number = fake.notification(whatsapp.ids["alice"], "hi",
                                             phone_number_id="999999999999999")
            ignored = await asyncio.to_thread(fake.deliver, whatsapp.url, other_number)
            assert (unsigned, forged, ignored) == (401, 401, 200)

    asyncio.run(scenario())
    assert posts(fake_llm) == [] and fake.sent == [] and fake.receipts == []


def test_whatsapp_replies_quote_the_message_and_a_429_is_retried(home, fake_llm, whatsapp):
    fake_llm.script(reply_text("hello alice"))
    whatsapp.fake.fail("messages", 429, retry_after=1)
    k = kernel(home, fake_llm, whatsapp)

    async def scenario() -> None:
        async with served(k, whatsapp):
            await say(whatsapp, "alice", "hi")
            await replies(whatsapp, "alice", 1)

    asyncio.run(scenario())
    [reply] = whatsapp.fake.sent
    [incoming] = [r for r in whatsapp.fake.requests if r.method == "POST"
                  and (r.body or {}).get("status") == "read"]
    assert reply.text == "hello alice" and reply.reply_to == incoming.body["message_id"]
    sends = [r for r in whatsapp.fake.requests if (r.body or {}).get("type") == "text"]
    assert len(sends) == 2  # refused once with 429, then delivered


def test_whatsapp_redelivered_notification_is_answered_once(home, fake_llm, whatsapp):
    fake_llm.script(reply_text("once"), reply_text("twice?"))
    k = kernel(home, fake_llm, whatsapp)
    fake = whatsapp.fake

    async def scenario() -> None:
        async with served(k, whatsapp):
            note = fake.notification(whatsapp.ids["alice"], "hi", message_id="wamid.SAME")
            assert await asyncio.to_thread(fake.deliver, whatsapp.url, note) == 200
            await replies(whatsapp, "alice", 1)
            assert await asyncio.to_thread(fake.deliver, whatsapp.url, note) == 200

    asyncio.run(scenario())
    assert len(posts(fake_llm)) == 1 and whatsapp.texts("alice") == ["once"]


def test_whatsapp_refuses_secrets_in_config_yaml(home, fake_llm, whatsapp):
    whatsapp.section = lambda: {"app_secret": "written-here", "port": whatsapp.port}  # type: ignore[method-assign]
    _, _, problems = build_adapters(kernel(home, fake_llm, whatsapp))
    assert any("WHATSAPP_CLOUD_APP_SECRET" in str(p) and "config.yaml" in str(p)
               for p in problems), problems


# --- Signal --------------------------------------------------------------------------------
@pytest.fixture
def signal(home: Path) -> Iterator[SignalDriver]:
    from hermes_agent.testing.fake_signal import FakeSignal

    with FakeSignal() as fake:
        yield SignalDriver(fake, home)


def test_signal_ignores_groups_not_listed_and_quotes_the_message_answered(home, fake_llm,
                                                                          signal):
    fake_llm.script(reply_text("hi alice"))
    k = kernel(home, fake_llm, signal)
    alice = signal.ids["alice"]
    stamps: list[int] = []

    async def scenario() -> None:
        async with served(k, signal):
            signal.fake.typing(alice)
            await asyncio.to_thread(signal.fake.user_message, alice, "in a stranger group",
                                    group="b3RoZXI=")
            envelope = await say(signal, "alice", "hi")
            stamps.append(envelope["timestamp"])
            [reply] = await asyncio.to_thread(signal.fake.wait_sent, 1, alice, WAIT)
            assert reply.reply_to == f"{envelope['timestamp']}:{alice}"

    asyncio.run(scenario())
    assert [user_contents(p) for p in posts(fake_llm)] == [["hi"]]
    assert signal.fake.receipts == [(alice, stamps)]  # read, once in the inbox


def test_signal_resumes_its_event_stream_after_a_drop(home, fake_llm, signal):
    fake_llm.script(reply_text("one"), reply_text("two"))
    k = kernel(home, fake_llm, signal)

    async def scenario() -> None:
        async with served(k, signal):
            await say(signal, "alice", "before the drop")
            await replies(signal, "alice", 1)
            signal.fake.drop()
            await say(signal, "alice", "during the drop")  # kept by signal-cli
            await signal.ready(2)
            await replies(signal, "alice", 2)

    asyncio.run(scenario())
    first, again = signal.fake.event_requests()[:2]
    assert "last-event-id" not in first.headers and again.headers["last-event-id"]
    assert user_contents(posts(fake_llm)[-1]) == ["before the drop", "during the drop"]


# --- Mattermost ----------------------------------------------------------------------------
@pytest.fixture
def mattermost(home: Path) -> Iterator[MattermostDriver]:
    from hermes_agent.testing.fake_mattermost import FakeMattermost

    with FakeMattermost() as fake:
        yield MattermostDriver(fake, home)


def test_mattermost_in_channels_answers_mentions_in_their_thread(home, fake_llm, mattermost):
    fake_llm.script(reply_text("in the thread"))
    k = kernel(home, fake_llm, mattermost)
    fake, alice = mattermost.fake, mattermost.ids["alice"]

    async def scenario() -> None:
        async with served(k, mattermost) as (runner, _):
            await asyncio.to_thread(fake.user_posts, "chan0000000000000000000000", alice,
                                    "talking among ourselves")
            root = await asyncio.to_thread(fake.user_posts, "chan0000000000000000000000", alice,
                                           "a thread")
            await asyncio.to_thread(fake.user_posts, "chan0000000000000000000000", alice,
                                    "@hermes what now?", root_id=root["id"])
            [reply] = await asyncio.to_thread(fake.wait_sent, 1, "chan0000000000000000000000",
                                              WAIT)
            assert reply.thread_id == root["id"]
            assert list(runner.chats) == [f"mattermost:chan0000000000000000000000:{root['id']}"]

    asyncio.run(scenario())
    assert [user_contents(p) for p in posts(fake_llm)] == [["what now?"]]


def test_mattermost_streams_a_reply_by_editing_its_post(home, fake_llm, mattermost):
    fake_llm.script(reply_text("a reply written in several pieces", chunk_size=4, pace=0.05))
    k = kernel(home, fake_llm, mattermost, stream_replies=True)

    async def scenario() -> None:
        async with served(k, mattermost):
            await say(mattermost, "alice", "stream it")
            await asyncio.to_thread(mattermost.fake.wait_until, lambda: any(
                m.text == "a reply written in several pieces" for m in mattermost.fake.sent),
                WAIT)

    asyncio.run(scenario())
    [reply] = mattermost.fake.sent
    assert reply.edits and reply.edits[-1] == "a reply written in several pieces"


def test_mattermost_with_a_refused_token_does_not_start(home, fake_llm, mattermost):
    mattermost.env = lambda: {"MATTERMOST_URL": mattermost.fake.base_url,  # type: ignore[method-assign]
                              "MATTERMOST_TOKEN": "wrong", "MATTERMOST_ALLOWED_USERS": "x"}
    k = kernel(home, fake_llm, mattermost)
    adapters, _, _ = build_adapters(k)

    async def scenario() -> bool:
        return bool(await adapters["mattermost"].connect())

    assert asyncio.run(scenario()) is False
    assert mattermost.fake.hellos == 0


def test_mattermost_reconnects_a_dropped_websocket(home, fake_llm, mattermost):
    fake_llm.script(reply_text("before"), reply_text("after"))
    k = kernel(home, fake_llm, mattermost)

    async def scenario() -> None:
        async with served(k, mattermost):
            await say(mattermost, "alice", "one")
            await replies(mattermost, "alice", 1)
            await asyncio.to_thread(mattermost.fake.drop)
            await mattermost.ready(2)
            await say(mattermost, "alice", "two")
            assert await replies(mattermost, "alice", 2) == ["before", "after"]

    asyncio.run(scenario())
    assert mattermost.fake.viewed == ["dm-alice", "dm-alice"]


def test_mattermost_answers_what_was_posted_while_the_gateway_was_down(home, fake_llm,
                                                                       mattermost):
    fake_llm.script(reply_text("first"), reply_text("second"))
    fake, alice = mattermost.fake, mattermost.ids["alice"]

    async def run(connections: int, count: int, text: str | None = None) -> None:
        async with serving(kernel(home, fake_llm, mattermost), "mattermost"):
            await mattermost.ready(connections)
            if text is not None:
                await say(mattermost, "alice", text)
            await replies(mattermost, "alice", count)

    fake.user_posts("dm-alice", alice, "before", kind="D")  # before the bot was in the chat
    asyncio.run(run(1, 1, "one"))
    fake.user_posts("dm-alice", alice, "while it was down", kind="D")
    asyncio.run(run(2, 2))  # a new gateway asks for what came after "one"
    assert [user_contents(p) for p in posts(fake_llm)] == [["one"], ["one", "while it was down"]]
    assert mattermost.texts("alice") == ["first", "second"]

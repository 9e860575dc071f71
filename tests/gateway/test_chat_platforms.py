"""WhatsApp (Cloud API), Signal (signal-cli's HTTP daemon) and Mattermost, each started by a
real gateway runner against a local fake of its service speaking the real wire format
(``hermes_agent.testing.fake_whatsapp``, ``fake_signal``, ``fake_mattermost``); the agent behind
them talks to the fake model server. The same scenarios run on each platform."""

from __future__ import annotations

import asyncio
import base64
import contextlib
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_agent.api import session_store
from hermes_agent.testing import make_kernel
from hermes_agent.testing.fake_llm import FakeLLMServer, reply_text

from .chat_drivers import Driver, fakes
from .conftest import serving
from .test_telegram import message_rows

pytest.importorskip("websockets", reason="the Mattermost platform and its fake need websockets")
pytest.importorskip("starlette", reason="the WhatsApp webhook needs starlette and uvicorn")
WAIT = 30.0
PNG = (b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + b"\x00" * 17, "image/png", "photo.png")
PDF = (b"%PDF-1.4\n% a small document\n", "application/pdf", "report.pdf")
CSV = (b"name,count\napples,3", "text/csv", "table.csv")


@pytest.fixture(params=sorted(fakes()))
def driver(request: Any, home: Path) -> Iterator[Driver]:
    fake_class, driver_class = fakes()[request.param]
    with fake_class() as fake:
        yield driver_class(fake, home)


def kernel(home: Path, llm: FakeLLMServer, driver: Driver, **gateway: Any) -> Any:
    config = {"model": {"provider": "custom", "base_url": llm.openai_base_url,
                        "default": "fake-model", "max_retries": 0,
                        "supports_vision": True},  # a model that sees the images sent
              "sessions": {"auto_title": False},
              "gateway": {"stream_replies": False, **gateway},
              "platforms": {driver.platform: {"enabled": True, **driver.section()}}}
    return make_kernel(home, config=config, builtins=True,
                       env={"HERMES_HOME": str(home), **driver.env()})


@contextlib.asynccontextmanager
async def served(k: Any, driver: Driver) -> AsyncIterator[tuple[Any, Any]]:
    async with serving(k, driver.platform) as (runner, adapter):
        await driver.ready()
        yield runner, adapter


async def say(driver: Driver, user: str, text: str, attachment: Any = None) -> Any:
    return await asyncio.to_thread(driver.say, user, text, attachment)


async def replies(driver: Driver, user: str, count: int) -> list[str]:
    sent = await asyncio.to_thread(driver.fake.wait_sent, count, driver.chat_of(user), WAIT)
    return [m.text for m in sent]


def posts(server: FakeLLMServer) -> list[Any]:
    return [r for r in server.requests if r.method == "POST"]


def user_contents(request: Any) -> list[Any]:
    return [m["content"] for m in request.body["messages"] if m["role"] == "user"]


def test_two_users_in_two_chats_get_their_own_sessions(home, fake_llm, driver):
    fake_llm.script(*(reply_text(f"answer {n}") for n in range(4)))
    k = kernel(home, fake_llm, driver)

    async def scenario() -> None:
        async with served(k, driver) as (runner, _):
            await say(driver, "alice", "I am alice")
            await replies(driver, "alice", 1)
            await say(driver, "bob", "I am bob")
            await replies(driver, "bob", 1)
            await say(driver, "alice", "alice again")
            await say(driver, "bob", "bob again")
            await replies(driver, "alice", 2)
            await replies(driver, "bob", 2)
            keys = sorted(runner.chats)
            assert keys == sorted(f"{driver.platform}:{driver.chat_of(u)}"
                                  for u in ("alice", "bob"))
            alice, bob = (runner.chats[f"{driver.platform}:{driver.chat_of(u)}"]
                          for u in ("alice", "bob"))
            assert alice.agent.session_id != bob.agent.session_id

    asyncio.run(scenario())
    histories = sorted(user_contents(p) for p in posts(fake_llm))
    assert histories == [["I am alice"], ["I am alice", "alice again"], ["I am bob"],
                         ["I am bob", "bob again"]]
    assert len(session_store(k).list_sessions(source=driver.platform)) == 2
    # each answer went to the chat it answers
    assert sorted(driver.texts("alice") + driver.texts("bob")) == [
        f"answer {n}" for n in range(4)]


def test_an_unknown_user_is_refused_and_nothing_is_stored(home, fake_llm, driver):
    k = kernel(home, fake_llm, driver)

    async def scenario() -> None:
        async with served(k, driver):
            await say(driver, "mallory", "let me in", PNG)
            [refusal] = await replies(driver, "mallory", 1)
            assert "not allowed" in refusal and driver.ids["mallory"] in refusal

    asyncio.run(scenario())
    assert posts(fake_llm) == []
    assert session_store(k).list_sessions() == []
    assert message_rows(home) == 0
    assert driver.acks() == 0  # never acknowledged as taken


def test_a_long_reply_is_split_at_the_platforms_limit(home, fake_llm, driver):
    count = 2 * driver.limit // 1000 + 3  # paragraphs of about 1000 characters, all different
    long = "".join(" ".join(f"p{n}w{w}x{(n * 31 + w * 7) % 97}" for w in range(110)) + ".\n\n"
                   for n in range(count))
    fake_llm.script(reply_text(long))
    k = kernel(home, fake_llm, driver)

    async def scenario() -> None:
        async with served(k, driver):
            await say(driver, "alice", "write a lot")
            pieces = await replies(driver, "alice", 3)
            assert all(len(p) <= driver.limit for p in pieces)
            assert max(len(p) for p in pieces) > driver.limit - 1000  # cut near the limit

    asyncio.run(scenario())
    sent = driver.texts("alice")
    assert "".join(sent).replace("\n", "").replace(" ", "") == \
        long.replace("\n", "").replace(" ", "")


def test_an_image_and_a_file_arrive_as_parts(home, fake_llm, driver):
    fake_llm.script(reply_text("a photo"), reply_text("a report"), reply_text("a table"))
    k = kernel(home, fake_llm, driver)

    async def scenario() -> None:
        async with served(k, driver):
            await say(driver, "alice", "what is this?", PNG)
            await replies(driver, "alice", 1)
            await say(driver, "alice", "", PDF)  # a file without a caption
            await replies(driver, "alice", 2)
            await say(driver, "alice", "and this?", CSV)
            await replies(driver, "alice", 3)

    asyncio.run(scenario())
    first, second, third = posts(fake_llm)
    image_turn = user_contents(first)[-1]
    assert image_turn == [{"type": "text", "text": "what is this?"}, {
        "type": "image_url", "image_url": {
            "url": "data:image/png;base64," + base64.b64encode(PNG[0]).decode()}}]
    # a file the model cannot be shown is saved, and named with its path in the text
    (saved,) = (home / "gateway" / "media" / driver.platform.split("_")[0]).iterdir()
    assert saved.read_bytes() == PDF[0] and saved.name.endswith("report.pdf")
    assert user_contents(second)[-1] == (f"[attached file: report.pdf (application/pdf, "
                                         f"{len(PDF[0])} bytes), saved at {saved}]")
    # the image stays in the session: the second request carries it as history
    assert user_contents(second)[0] == image_turn
    # a small text file reaches every model as text
    assert user_contents(third)[-1] == "and this?\n[file table.csv]\n```\nname,count\napples,3\n```"

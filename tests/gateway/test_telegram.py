"""The Telegram platform, started by a real gateway runner against the fake Bot API
(``hermes_agent.testing.fake_telegram``); the agent behind it talks to the fake model server."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import socket
import sqlite3
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_agent.api import session_store
from hermes_agent.hookspecs import EVENT_HOOKS
from hermes_agent.testing import make_kernel
from hermes_agent.testing.fake_llm import FakeLLMServer, reply_text, reply_tool_call
from hermes_agent.testing.fake_telegram import FakeTelegram

from .conftest import serving

WAIT = 30.0
ALICE, BOB, MALLORY = 1001, 1002, 6666
SECRET = "webhook-secret_0123456789"


@pytest.fixture
def telegram() -> Iterator[FakeTelegram]:
    with FakeTelegram() as fake:
        yield fake


def adder(ctx: Any) -> None:
    ctx.register_tool("add", "testing", {
        "name": "add", "description": "Add two numbers.",
        "parameters": {"type": "object", "properties": {
            "a": {"type": "number"}, "b": {"type": "number"}}}},
        lambda args, **_: json.dumps({"sum": args["a"] + args["b"]}))
adder.__name__ = "adder"


def kernel(home: Path, llm: FakeLLMServer, telegram: FakeTelegram,
           env: dict[str, str] | None = None, plugins: tuple[Any, ...] = (adder,),
           stream: bool = False, **section: Any) -> Any:
    """Replies are sent whole unless ``stream`` (a streamed reply is edited as it grows)."""
    config = {"model": {"provider": "custom", "base_url": llm.openai_base_url,
                        "default": "fake-model", "max_retries": 0},
              "sessions": {"auto_title": False}, "gateway": {"stream_replies": stream},
              "platforms": {"telegram": {"enabled": True, "base_url": telegram.base_url,
                                         "poll_timeout": 5, **section}}}
    return make_kernel(home, config=config, builtins=True, plugins=list(plugins), env={
        "HERMES_HOME": str(home), "TELEGRAM_BOT_TOKEN": telegram.token,
        "TELEGRAM_ALLOWED_USERS": f"{ALICE},bob", **(env or {})})


@contextlib.asynccontextmanager
async def served(kernel: Any) -> AsyncIterator[tuple[Any, Any]]:
    """A started gateway with the telegram platform (see ``conftest.serving``)."""
    async with serving(kernel, "telegram") as (runner, adapter):
        yield runner, adapter


async def replies(telegram: FakeTelegram, count: int, chat_id: int) -> list[Any]:
    return await asyncio.to_thread(telegram.wait_sent, count, chat_id, WAIT)


def posts(server: FakeLLMServer) -> list[Any]:
    return [r for r in server.requests if r.method == "POST"]


def user_texts(request: Any) -> list[str]:
    return [m["content"] for m in request.body["messages"] if m["role"] == "user"]


def message_rows(home: Path) -> int:
    """Every message row in every SQLite database under ``home``."""
    total = 0
    for path in home.rglob("*.db"):
        with contextlib.closing(sqlite3.connect(path)) as db:
            tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
            if "messages" in tables:
                total += db.execute("SELECT COUNT(*) FROM messages").fetchone()[0]
    return total


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# --- polling -----------------------------------------------------------------------------------
def test_two_users_in_two_chats_at_once_get_their_own_sessions(home, fake_llm, telegram):
    fake_llm.script(*(reply_text("an answer") for _ in range(4)))
    k = kernel(home, fake_llm, telegram)

    async def scenario() -> None:
        async with served(k) as (runner, _):
            a = telegram.user_message(ALICE, ALICE, "I am alice", username="alice")
            b = telegram.user_message(-100500, BOB, "I am bob", username="bob",
                                      chat_type="supergroup", thread_id=7)
            [to_alice] = await replies(telegram, 1, ALICE)
            [to_bob] = await replies(telegram, 1, -100500)
            assert to_alice.reply_to_message_id == a["message"]["message_id"]
            assert to_bob.reply_to_message_id == b["message"]["message_id"]
            assert (to_alice.message_thread_id, to_bob.message_thread_id) == (None, 7)
            assert sorted(runner.chats) == ["telegram:-100500:7", f"telegram:{ALICE}"]
            telegram.user_message(ALICE, ALICE, "alice again", username="alice")
            telegram.user_message(-100500, BOB, "bob again", username="bob",
                                  chat_type="supergroup", thread_id=7)
            await replies(telegram, 2, ALICE)
            await replies(telegram, 2, -100500)
            alice, bob = runner.chats[f"telegram:{ALICE}"], runner.chats["telegram:-100500:7"]
            assert alice.agent.session_id != bob.agent.session_id

    asyncio.run(scenario())
    histories = sorted(user_texts(p) for p in posts(fake_llm))
    assert histories == [["I am alice"], ["I am alice", "alice again"], ["I am bob"],
                         ["I am bob", "bob again"]]
    rows = session_store(k).list_sessions(source="telegram")
    assert len(rows) == 2
    assert ("typing" in {action for _, action in telegram.actions})


def test_an_unknown_user_is_refused_and_nothing_is_stored(home, fake_llm, telegram):
    k = kernel(home, fake_llm, telegram)

    async def scenario() -> None:
        async with served(k):
            telegram.user_message(MALLORY, MALLORY, "let me in", username="mallory")
            [refusal] = await replies(telegram, 1, MALLORY)
            assert "not allowed" in refusal.plain and str(MALLORY) in refusal.plain

    asyncio.run(scenario())
    assert posts(fake_llm) == []
    assert session_store(k).list_sessions() == []
    assert message_rows(home) == 0
    assert not (home / "gateway" / "sessions.json").exists()


def test_handled_updates_are_confirmed_so_a_restart_does_not_receive_them_again(
        home, fake_llm, telegram):
    fake_llm.script(reply_text("noted"), reply_text("still here"))
    k = kernel(home, fake_llm, telegram)

    async def run(text: str, count: int) -> None:
        async with served(k):
            telegram.user_message(ALICE, ALICE, text)
            await replies(telegram, count, ALICE)

    asyncio.run(run("remember 7", 1))
    assert telegram.pending == []
    asyncio.run(run("what did I say?", 2))
    assert telegram.texts(ALICE) == ["noted", "still here"]
    assert user_texts(posts(fake_llm)[-1]) == ["remember 7", "what did I say?"]
    assert len(telegram.requests("deleteWebhook")) == 2  # polling clears any webhook first


def test_polling_outlasts_failing_get_updates(home, fake_llm, telegram, caplog):
    fake_llm.script(reply_text("still listening"))
    telegram.fail("getUpdates", 502, "Bad Gateway")
    k = kernel(home, fake_llm, telegram)

    async def scenario() -> None:
        async with served(k):
            telegram.user_message(ALICE, ALICE, "are you there?")
            assert [m.plain for m in await replies(telegram, 1, ALICE)] == ["still listening"]

    asyncio.run(scenario())
    assert len(telegram.requests("getUpdates")) >= 2
    assert "getUpdates failed" in caplog.text and "Bad Gateway" in caplog.text


def test_a_long_reply_is_split_into_messages_telegram_accepts(home, fake_llm, telegram):
    paragraphs = [f"**Part {n}.** " + " ".join(f"word{n}-{i}" for i in range(150))
                  for n in range(6)]
    answer = "\n\n".join(paragraphs)
    assert len(answer) > 2 * 4096
    fake_llm.script(reply_text(answer))
    k = kernel(home, fake_llm, telegram)

    async def scenario() -> None:
        async with served(k):
            telegram.user_message(ALICE, ALICE, "write a lot")
            await asyncio.to_thread(telegram.wait_until, lambda t: any(
                "word5-149" in text for text in t.texts(ALICE)))  # the last word

    asyncio.run(scenario())
    sent = [m for m in telegram.sent if m.chat_id == str(ALICE)]
    assert len(sent) >= 3 and all(len(m.plain) <= 4096 for m in sent)
    assert all(m.parse_mode == "HTML" and "<b>Part" in m.text for m in sent)
    assert " ".join(m.plain for m in sent).split() == answer.replace("**", "").split()
    assert sent[0].reply_to_message_id is not None and sent[1].reply_to_message_id is None


def test_a_429_is_retried_after_retry_after_without_duplicates(home, fake_llm, telegram):
    fake_llm.script(reply_text("worth the wait"))
    telegram.fail("sendMessage", 429, retry_after=1)
    k = kernel(home, fake_llm, telegram)

    async def scenario() -> None:
        async with served(k):
            telegram.user_message(ALICE, ALICE, "hello")
            await replies(telegram, 1, ALICE)

    asyncio.run(scenario())
    refused, delivered = telegram.answers("sendMessage")
    assert (refused.status, delivered.status) == (429, 200)
    assert delivered.at - refused.at >= 0.99  # the retry waited Telegram's retry_after
    assert telegram.texts(ALICE) == ["worth the wait"]


def test_send_reports_what_may_be_retried(home, fake_llm, telegram):
    k = kernel(home, fake_llm, telegram)
    telegram.add_chat(ALICE, first_name="Alice", last_name="Liddell")

    async def scenario() -> None:
        async with served(k) as (_, adapter):
            telegram.fail("sendMessage", 429, retry_after=3)
            limited = await adapter.send(str(ALICE), "hi")
            assert (limited.success, limited.retryable, limited.retry_after) == (False, True, 3)
            telegram.fail("sendMessage", 502, "Bad Gateway")
            assert (await adapter.send(str(ALICE), "hi")).retryable
            telegram.fail("sendMessage", 403, "Forbidden: bot was blocked by the user")
            blocked = await adapter.send(str(ALICE), "hi")
            assert not blocked.success and not blocked.retryable and "blocked" in blocked.error
            assert telegram.texts(ALICE) == []
            sent = await adapter.send(str(ALICE), "*fine*")
            assert sent.success and telegram.sent[-1].text == "<i>fine</i>"
            edited = await adapter.edit_message(str(ALICE), sent.message_id, "*fine*, more")
            assert edited.success and telegram.sent[-1].edits == ["fine, more"]
            assert (await adapter.edit_message(str(ALICE), sent.message_id, "*fine*, more")
                    ).success  # "message is not modified" is no failure
            wide = await adapter.send(str(ALICE), "\U0001F600" * 3000)  # 6000 UTF-16 units
            assert wide.success and [len(m.plain) for m in telegram.sent[-2:]] == [2048, 952]
            info = await adapter.get_chat_info(str(ALICE))
            assert (info["name"], info["type"], info["id"]) == ("Alice Liddell", "dm", ALICE)

    asyncio.run(scenario())
    dead = kernel(home, fake_llm, telegram)

    async def unreachable() -> None:
        async with served(dead) as (_, adapter):
            adapter.api._prefix = f"http://127.0.0.1:{free_port()}/bot{telegram.token}/"
            result = await adapter.send(str(ALICE), "hi")
            assert result.retryable and not result.success
            assert telegram.token not in (result.error or "")

    asyncio.run(unreachable())


def test_markup_telegram_refuses_is_sent_as_plain_text(home, fake_llm, telegram):
    crossed = "**bold and *italic** crossed* 1 < 2 & `x<y`"
    fake_llm.script(reply_text(crossed))
    k = kernel(home, fake_llm, telegram)

    async def scenario() -> None:
        async with served(k):
            telegram.user_message(ALICE, ALICE, "format something")
            await replies(telegram, 1, ALICE)

    asyncio.run(scenario())
    [first, second] = telegram.requests("sendMessage")
    assert first.body["parse_mode"] == "HTML" and "parse_mode" not in second.body
    [message] = telegram.sent
    assert message.plain == crossed and message.parse_mode is None


def test_allowed_chats_limits_groups_not_direct_messages(home, fake_llm, telegram):
    fake_llm.script(reply_text("group answer"), reply_text("dm answer"))
    k = kernel(home, fake_llm, telegram, allowed_chats=[-200])

    async def scenario() -> None:
        async with served(k):
            telegram.user_message(-300, ALICE, "from an unlisted group", chat_type="group")
            telegram.user_message(-200, ALICE, "from a listed group", chat_type="group")
            assert [m.plain for m in await replies(telegram, 1, -200)] == ["group answer"]
            telegram.user_message(ALICE, ALICE, "a direct message")
            assert [m.plain for m in await replies(telegram, 1, ALICE)] == ["dm answer"]

    asyncio.run(scenario())
    assert telegram.texts(-300) == []
    assert [user_texts(p) for p in posts(fake_llm)] == [["from a listed group"],
                                                        ["a direct message"]]


# --- webhook -----------------------------------------------------------------------------------
def test_webhook_mode_accepts_only_the_secret(home, fake_llm, telegram):
    fake_llm.script(reply_text("via webhook"))
    port = free_port()
    url = f"http://127.0.0.1:{port}/tg/hook"
    k = kernel(home, fake_llm, telegram, env={"TELEGRAM_WEBHOOK_SECRET": SECRET},
               mode="webhook", webhook_url=url, port=port)

    async def scenario() -> None:
        async with served(k) as (runner, _):
            assert telegram.webhook["url"] == url
            assert telegram.webhook["secret_token"] == SECRET
            bad = telegram.user_message(ALICE, ALICE, "forged", queue=False)
            assert await asyncio.to_thread(telegram.deliver, bad, "wrong-secret") == 403
            assert await asyncio.to_thread(telegram.deliver, bad, None) == 403
            assert runner.chats == {}
            good = telegram.user_message(ALICE, ALICE, "genuine", queue=False)
            assert await asyncio.to_thread(telegram.deliver, good) == 200
            assert [m.plain for m in await replies(telegram, 1, ALICE)] == ["via webhook"]

    asyncio.run(scenario())
    assert [user_texts(p) for p in posts(fake_llm)] == [["genuine"]]
    assert telegram.requests("getUpdates") == [] and telegram.requests("deleteWebhook") == []


def test_webhook_mode_without_a_secret_never_starts(home, fake_llm, telegram):
    from hermes_agent.builtin_plugins.gateway.platforms import build_adapters

    k = kernel(home, fake_llm, telegram, mode="webhook", webhook_url="https://bot.example/hook")
    adapters, _, problems = build_adapters(k)
    assert adapters == {}
    [problem] = problems
    assert "TELEGRAM_WEBHOOK_SECRET" in problem
    assert telegram.requests() == []


def test_a_token_in_config_yaml_is_refused(home, fake_llm, telegram):
    from hermes_agent.builtin_plugins.gateway.platforms import build_adapters

    k = kernel(home, fake_llm, telegram, token="123:in-the-config")
    adapters, _, [problem] = build_adapters(k)
    assert adapters == {} and "TELEGRAM_BOT_TOKEN" in problem and "in-the-config" not in problem


def test_the_token_never_reaches_the_log(home, fake_llm, telegram, caplog):
    caplog.set_level(logging.DEBUG)
    fake_llm.script(reply_text("logged"))
    k = kernel(home, fake_llm, telegram)

    async def scenario() -> None:
        async with served(k):
            telegram.user_message(ALICE, ALICE, "hello")
            await replies(telegram, 1, ALICE)

    asyncio.run(scenario())
    wrong = "987654321:AAWrongTokenThatTelegramRefuses_xyz"
    refused = kernel(home, fake_llm, telegram, env={"TELEGRAM_BOT_TOKEN": wrong})

    async def unauthorized() -> None:
        from hermes_agent.builtin_plugins.gateway.platforms import build_adapters
        from hermes_agent.builtin_plugins.gateway.runner import GatewayRunner

        adapters, entries, _ = build_adapters(refused)
        runner = GatewayRunner(refused, adapters, entries=entries)
        assert await runner.start() == []
        await runner.stop(WAIT)

    asyncio.run(unauthorized())
    assert "sendMessage" in caplog.text and "Unauthorized" in caplog.text
    assert "TELEGRAM_BOT_TOKEN" in caplog.text  # the 401 says what to check
    assert telegram.token not in caplog.text and wrong not in caplog.text
    assert "bot***" in caplog.text  # the request lines are there, masked


# --- hooks ---------------------------------------------------------------------------------------
def test_a_telegram_turn_fires_the_hooks_of_an_agent_api_turn(home, fake_llm, telegram):
    fired: list[str] = []

    def recorder(ctx: Any) -> None:
        for name in EVENT_HOOKS:
            if name != "pre_gateway_dispatch":
                ctx.register_hook(name, lambda _name=name, **_: fired.append(_name))
    recorder.__name__ = "recorder"
    script = (reply_tool_call("add", {"a": 2, "b": 3}), reply_text("5"))
    k = kernel(home, fake_llm, telegram, plugins=(adder, recorder))

    fake_llm.script(*script)
    agent = k.service("agent").create(platform="cli")
    assert agent.run_conversation("what is 2 + 3?").final_response == "5"
    through_api = list(fired)

    fake_llm.script(*script)
    fired.clear()

    async def scenario() -> list[str]:
        async with served(k):
            telegram.user_message(ALICE, ALICE, "what is 2 + 3?")
            assert [m.plain for m in await replies(telegram, 1, ALICE)] == ["5"]
            return list(fired)

    through_telegram = asyncio.run(scenario())
    assert through_telegram == through_api
    assert {"pre_llm_call", "pre_tool_call", "post_tool_call"} <= set(through_api)


def test_a_streamed_reply_is_one_message_edited_into_the_answer(home, fake_llm, telegram,
                                                                 monkeypatch):
    from hermes_agent.kits.chat_text import EditedReply

    monkeypatch.setattr(EditedReply, "interval", 0.0)
    fake_llm.script(reply_text("**Streaming** works, piece by piece.", chunk_size=5))
    k = kernel(home, fake_llm, telegram, stream=True)

    async def scenario() -> None:
        async with served(k):
            telegram.user_message(ALICE, ALICE, "stream please")
            [message] = await replies(telegram, 1, ALICE)
            deadline = asyncio.get_running_loop().time() + WAIT
            while telegram.sent[0].shown != "Streaming works, piece by piece.":
                assert asyncio.get_running_loop().time() < deadline, telegram.sent[0]
                await asyncio.sleep(0.05)

    asyncio.run(scenario())
    [message] = telegram.sent
    assert message.edits and message.parse_mode == "HTML"
    assert len(telegram.requests("editMessageText")) == len(message.edits)


def test_an_update_the_gateway_could_not_store_comes_again(home, fake_llm, telegram):
    fake_llm.script(reply_text("stored the second time"))
    k = kernel(home, fake_llm, telegram)

    async def scenario() -> None:
        async with served(k) as (runner, _):
            accept, failures = runner.inbox.accept, []

            def flaky(key: str, message: Any) -> int:
                if not failures:
                    failures.append(key)
                    raise OSError("disk full")
                return accept(key, message)

            runner.inbox.accept = flaky
            telegram.user_message(ALICE, ALICE, "keep this")
            assert [m.plain for m in await replies(telegram, 1, ALICE)] == [
                "stored the second time"]
            assert failures == [f"telegram:{ALICE}"]

    asyncio.run(scenario())
    assert telegram.texts(ALICE) == ["stored the second time"]

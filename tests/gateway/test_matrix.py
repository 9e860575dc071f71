"""The Matrix platform against a real homeserver: Synapse (from PyPI) started on 127.0.0.1 with
SQLite, once per test session; users registered through its shared-secret admin API talk to
the bot through the client-server API, and the gateway answers with the scripted model."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from hermes_agent.api import session_store
from hermes_agent.testing import make_kernel
from hermes_agent.testing.fake_llm import FakeLLMServer, reply_text

pytest.importorskip("nio", reason="the Matrix platform needs matrix-nio: "
                    "pip install 'hermes-agent-runtime[platform-matrix]'")
from hermes_agent.testing.synapse import MatrixUser, Synapse, SynapseUnavailable  # noqa: E402

from .conftest import serving  # noqa: E402

WAIT = 90.0  # a bound, never a pace: Synapse on a busy 2-core machine is slow
PNG = (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02\x00\x00"
       b"\x00\x90wS\xde\x00\x00\x00\x0cIDATx\x9cc\xf8\xff\xff?\x00\x05\xfe\x02\xfe\xa7\x35\x81"
       b"\x84\x00\x00\x00\x00IEND\xaeB`\x82")


@pytest.fixture(scope="session")
def synapse(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """One Synapse for the whole session (each test registers users of its own)."""
    try:
        server = Synapse.start(tmp_path_factory.mktemp("synapse"))
    except SynapseUnavailable as exc:
        pytest.skip(f"no Matrix homeserver: {exc}")
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def users(synapse: Synapse) -> Any:
    made: list[MatrixUser] = []

    def register(name: str) -> MatrixUser:
        made.append(synapse.register(name))
        return made[-1]

    yield register
    for user in made:
        user.close()


def kernel(home: Path, llm: FakeLLMServer, synapse: Synapse, bot: MatrixUser,
           allowed: list[MatrixUser], login: str = "token", record: list[Any] | None = None,
           **section: Any) -> Any:
    credentials = ({"MATRIX_ACCESS_TOKEN": bot.access_token} if login == "token" else
                   {"MATRIX_USER_ID": bot.user_id, "MATRIX_PASSWORD": bot.password})
    config = {"model": {"provider": "custom", "base_url": llm.openai_base_url,
                        "default": "fake-model", "max_retries": 0},
              "sessions": {"auto_title": False}, "gateway": {"stream_replies": False},
              "platforms": {"matrix": {"enabled": True, "sync_timeout": 5, **section}}}

    def recorder(ctx: Any) -> None:  # what the adapter handed the gateway
        ctx.register_hook("pre_gateway_dispatch", lambda event, **_: record.append(event))
    recorder.__name__ = "matrix_recorder"
    return make_kernel(home, config=config, builtins=True,
                       plugins=[recorder] if record is not None else [], env={
                           "HERMES_HOME": str(home), "MATRIX_HOMESERVER": synapse.url,
                           "MATRIX_ALLOWED_USERS": ",".join(u.user_id for u in allowed),
                           **credentials})


@contextlib.asynccontextmanager
async def served(k: Any) -> AsyncIterator[tuple[Any, Any]]:
    async with serving(k, "matrix") as started:
        yield started


async def wait(user: MatrixUser, predicate: Callable[[], Any]) -> Any:
    return await asyncio.to_thread(user.wait, predicate, WAIT)


async def joined(user: MatrixUser, room: str, bot: MatrixUser) -> None:
    """Until the bot has accepted the invite (it joins on its own)."""
    await asyncio.to_thread(_until, lambda: user.members(room).get(bot.user_id) == "join")


def _until(predicate: Callable[[], bool]) -> None:
    import time
    deadline = time.monotonic() + WAIT
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError("condition not met")
        time.sleep(0.2)  # polling the homeserver's state, bounded by WAIT


def bodies(user: MatrixUser, room: str, bot: MatrixUser) -> list[str]:
    return [e["content"]["body"] for e in user.messages_from(room, bot.user_id)]


def model_posts(llm: FakeLLMServer) -> list[Any]:
    return [r for r in llm.requests if r.method == "POST"]


def test_two_users_in_two_rooms_get_their_own_sessions(home, fake_llm, synapse, users):
    fake_llm.script(reply_text("hello there"), reply_text("hello there"))
    bot, alice, bob, carol = (users(n) for n in ("bot", "alice", "bob", "carol"))
    k = kernel(home, fake_llm, synapse, bot, [alice, bob])

    async def scenario() -> None:
        async with served(k) as (runner, _):
            dm = alice.create_room(invite=[bot.user_id], direct=True)
            group = bob.create_room(invite=[bot.user_id, carol.user_id], name="team")
            await joined(alice, dm, bot)
            await joined(bob, group, bot)
            alice.say(dm, "hi from a DM")
            bob.say(group, "not for the bot")  # a room needs a mention
            bob.send(group, {"msgtype": "m.text", "body": f"{bot.user_id}: hi from a room",
                             "m.mentions": {"user_ids": [bot.user_id]}})
            assert await wait(alice, lambda: bodies(alice, dm, bot)) == ["hello there"]
            assert await wait(bob, lambda: bodies(bob, group, bot)) == ["hello there"]
            assert sorted(runner.chats) == sorted([f"matrix:{dm}", f"matrix:{group}"])
            assert runner.chats[f"matrix:{dm}"].agent.session_id != (
                runner.chats[f"matrix:{group}"].agent.session_id)

    asyncio.run(scenario())
    assert len(session_store(k).list_sessions(source="matrix")) == 2
    asked = [r.body["messages"][-1]["content"] for r in model_posts(fake_llm)]
    assert sorted(asked) == ["hi from a DM", "hi from a room"]  # the mention taken out
    system = model_posts(fake_llm)[-1].body["messages"][0]
    assert "You are chatting on Matrix" in system["content"]


def test_an_unknown_user_is_refused_and_nothing_is_stored(home, fake_llm, synapse, users):
    bot, alice, mallory = (users(n) for n in ("bot", "alice", "mallory"))
    k = kernel(home, fake_llm, synapse, bot, [alice], free_response_rooms=[])

    async def scenario() -> None:
        async with served(k) as (runner, adapter):
            own = mallory.create_room(invite=[bot.user_id], direct=True)
            await asyncio.to_thread(  # her invite is declined
                _until, lambda: mallory.members(own).get(bot.user_id) == "leave")
            shared = alice.create_room(invite=[bot.user_id, mallory.user_id])
            await joined(alice, shared, bot)
            mallory._call("POST", f"/join/{shared}")
            mallory._call("PUT", f"/profile/{mallory.user_id}/displayname",  # posing as alice
                          json={"displayname": alice.user_id})
            mxc = mallory.upload(PNG, "image/png", "secret.png")
            mallory.send(shared, {"msgtype": "m.image", "body": "secret.png", "url": mxc,
                                  "info": {"mimetype": "image/png", "size": len(PNG)},
                                  "m.mentions": {"user_ids": [bot.user_id]}})
            mallory.say(shared, f"{bot.user_id} let me in")
            [refusal] = await wait(mallory, lambda: bodies(mallory, shared, bot))
            assert "not allowed" in refusal and mallory.user_id in refusal
            assert list(runner.chats) == []
            assert not (adapter.state.folder / "media").exists()  # her file was not fetched

    asyncio.run(scenario())
    assert model_posts(fake_llm) == []
    assert session_store(k).list_sessions(source="matrix") == []


def test_a_long_reply_is_split_at_4000_characters(home, fake_llm, synapse, users):
    paragraphs = [f"Paragraph {i}: " + "word " * 90 for i in range(25)]
    answer = "\n\n".join(p.strip() for p in paragraphs)
    fake_llm.script(reply_text(answer))
    bot, alice = users("bot"), users("alice")
    k = kernel(home, fake_llm, synapse, bot, [alice])

    async def scenario() -> None:
        async with served(k):
            dm = alice.create_room(invite=[bot.user_id], direct=True)
            await joined(alice, dm, bot)
            question = alice.say(dm, "tell me a lot")
            pieces = await wait(alice, lambda: (
                m := alice.messages_from(dm, bot.user_id)) and "Paragraph 24" in (
                    m[-1]["content"]["body"]) and m)
            texts = [p["content"]["body"] for p in pieces]
            assert len(texts) >= 3 and all(len(t) <= 4000 for t in texts)
            assert "\n\n".join(texts) == answer
            first = pieces[0]["content"]["m.relates_to"]["m.in_reply_to"]["event_id"]
            assert first == question
            assert all("m.relates_to" not in p["content"] for p in pieces[1:])

    asyncio.run(scenario())


def test_an_image_and_a_file_arrive_as_parts(home, fake_llm, synapse, users):
    fake_llm.script(reply_text("nice picture"), reply_text("got the notes"))
    bot, alice = users("bot"), users("alice")
    seen: list[Any] = []
    k = kernel(home, fake_llm, synapse, bot, [alice], record=seen)
    notes = b"line one\nline two\n"

    async def scenario() -> None:
        async with served(k):
            dm = alice.create_room(invite=[bot.user_id], direct=True)
            await joined(alice, dm, bot)
            image = alice.upload(PNG, "image/png", "cat.png")
            alice.send(dm, {"msgtype": "m.image", "body": "look at this", "filename": "cat.png",
                            "url": image, "info": {"mimetype": "image/png", "size": len(PNG)}})
            await wait(alice, lambda: bodies(alice, dm, bot) == ["nice picture"])
            text = alice.upload(notes, "text/plain", "notes.txt")
            alice.send(dm, {"msgtype": "m.file", "body": "notes.txt", "url": text,
                            "info": {"mimetype": "text/plain", "size": len(notes)}})
            await wait(alice, lambda: len(bodies(alice, dm, bot)) == 2)

    asyncio.run(scenario())
    [picture], [document] = seen[0].attachments, seen[1].attachments
    assert picture["type"] == "image" and picture["mime_type"] == "image/png"
    assert picture["name"] == "cat.png" and picture["size"] == len(PNG)
    assert Path(picture["path"]).read_bytes() == PNG
    assert document["type"] == "file" and document["name"] == "notes.txt"
    assert Path(document["path"]).read_bytes() == notes
    asked = [r.body["messages"][-1]["content"] for r in model_posts(fake_llm)]
    # the image also goes as an image part (described to this model, which cannot see)
    asked[0] = "\n".join(p["text"] for p in asked[0] if p.get("type") == "text")
    assert asked[0].startswith("look at this\n[image: cat.png (image/png, ")
    assert picture["path"] in asked[0]
    assert asked[1].startswith("[file: notes.txt (text/plain, ") and document["path"] in asked[1]
    assert hashlib.sha256(PNG).hexdigest() == hashlib.sha256(
        Path(picture["path"]).read_bytes()).hexdigest()


def test_a_thread_is_its_own_chat_answered_in_the_thread(home, fake_llm, synapse, users):
    fake_llm.script(reply_text("in **the** thread"), reply_text("still here"))
    bot, bob, carol = users("bot"), users("bob"), users("carol")
    k = kernel(home, fake_llm, synapse, bot, [bob])

    def in_thread(root: str, text: str, **extra: Any) -> dict[str, Any]:
        return {"msgtype": "m.text", "body": text, **extra, "m.relates_to": {
            "rel_type": "m.thread", "event_id": root, "is_falling_back": True,
            "m.in_reply_to": {"event_id": root}}}

    async def scenario() -> None:
        async with served(k) as (runner, _):
            room = bob.create_room(invite=[bot.user_id, carol.user_id])
            await joined(bob, room, bot)
            root = bob.say(room, "a topic, not for the bot")
            bob.send(room, in_thread(root, f"{bot.user_id} what do you think?",
                                     **{"m.mentions": {"user_ids": [bot.user_id]}}))
            [first] = await wait(bob, lambda: bob.messages_from(room, bot.user_id))
            assert first["content"]["m.relates_to"]["rel_type"] == "m.thread"
            assert first["content"]["m.relates_to"]["event_id"] == root
            assert first["content"]["body"] == "in **the** thread"  # markdown, and as HTML:
            assert first["content"]["format"] == "org.matrix.custom.html"
            assert first["content"]["formatted_body"] == "in <strong>the</strong> thread"
            bob.send(room, in_thread(root, "and without a mention?"))
            await wait(bob, lambda: bodies(bob, room, bot) == ["in **the** thread",
                                                               "still here"])
            assert "format" not in bob.messages_from(room, bot.user_id)[1]["content"]  # plain
            assert list(runner.chats) == [f"matrix:{room}:{root}"]

    asyncio.run(scenario())
    asked = [r.body["messages"][-1]["content"] for r in model_posts(fake_llm)]
    assert asked == ["what do you think?", "and without a mention?"]


def test_an_encrypted_room_gets_one_notice_and_nothing_reaches_the_model(home, fake_llm,
                                                                          synapse, users):
    bot, alice = users("bot"), users("alice")
    k = kernel(home, fake_llm, synapse, bot, [alice])
    sealed = {"algorithm": "m.megolm.v1.aes-sha2", "ciphertext": "AwgAEnB1bmt", "device_id": "D",
              "sender_key": "c2VuZGVy", "session_id": "c2Vzc2lvbg"}

    async def scenario() -> None:
        async with served(k) as (runner, _):
            room = alice.create_room(invite=[bot.user_id], direct=True, encrypted=True)
            await joined(alice, room, bot)
            alice.send(room, sealed, event_type="m.room.encrypted")
            alice.send(room, sealed, event_type="m.room.encrypted")
            [notice] = await wait(alice, lambda: bodies(alice, room, bot))
            assert "cannot read end-to-end encrypted messages" in notice
            alice.say(room, "plain text in an encrypted room")  # as a client without E2EE
            await wait(alice, lambda: len(bodies(alice, room, bot)) == 2)
            assert runner.chats  # the plain message was answered

    fake_llm.script(reply_text("plain answer"))
    asyncio.run(scenario())
    asked = [r.body["messages"][-1]["content"] for r in model_posts(fake_llm)]
    assert asked == ["plain text in an encrypted room"]


def test_password_login_and_a_restart_answers_what_came_meanwhile(home, fake_llm, synapse,
                                                                  users):
    fake_llm.script(reply_text("first"), reply_text("while you were away"))
    bot, alice = users("bot"), users("alice")

    async def first_run() -> tuple[str, str]:
        async with served(kernel(home, fake_llm, synapse, bot, [alice], login="password")) as (
                _, adapter):
            dm = alice.create_room(invite=[bot.user_id], direct=True)
            await joined(alice, dm, bot)
            alice.say(dm, "hello")
            await wait(alice, lambda: bodies(alice, dm, bot) == ["first"])
            return dm, adapter.client.device_id

    async def second_run(dm: str) -> str:
        async with served(kernel(home, fake_llm, synapse, bot, [alice], login="password")) as (
                _, adapter):
            await wait(alice, lambda: bodies(alice, dm, bot) == ["first", "while you were away"])
            return str(adapter.client.device_id)

    dm, device = asyncio.run(first_run())
    alice.say(dm, "are you there?")  # the gateway is down
    assert asyncio.run(second_run(dm)) == device  # the same device, not a new one per start
    asked = [r.body["messages"][-1]["content"] for r in model_posts(fake_llm)]
    assert asked == ["hello", "are you there?"]


def test_settings_say_what_to_set():
    from hermes_agent.plugins.platforms.matrix.settings import SettingsError, load

    with pytest.raises(SettingsError, match="MATRIX_HOMESERVER"):
        load({}, {"MATRIX_ACCESS_TOKEN": "t"})
    with pytest.raises(SettingsError, match="MATRIX_ACCESS_TOKEN, or MATRIX_USER_ID"):
        load({}, {"MATRIX_HOMESERVER": "https://m.example"})
    with pytest.raises(SettingsError, match="MATRIX_USER_ID"):
        load({}, {"MATRIX_HOMESERVER": "https://m.example", "MATRIX_PASSWORD": "p"})
    with pytest.raises(SettingsError, match="set MATRIX_ACCESS_TOKEN in the environment"):
        load({"access_token": "t"}, {"MATRIX_HOMESERVER": "https://m.example"})
    settings = load({"free_response_rooms": "!a:x, !b:x"}, {
        "MATRIX_HOMESERVER": "https://m.example/", "MATRIX_ACCESS_TOKEN": "syt_secret",
        "MATRIX_ALLOWED_USERS": "@alice:x", "MATRIX_ENCRYPTION": "true"})
    assert settings.homeserver == "https://m.example"
    assert settings.free_response_rooms == {"!a:x", "!b:x"}
    assert settings.allowed_users == {"@alice:x"} and settings.encryption_requested
    assert "syt_secret" not in repr(settings)


def _handed_over(home: Path) -> list[str]:
    """The event ids the bot's saved state says are in the gateway's inbox."""
    return [e for path in (home / "gateway" / "matrix").glob("*.json")
            for e in json.loads(path.read_text()).get("recent") or []]


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_sigkill_mid_turn_loses_no_handed_over_message(home, fake_llm, synapse, users):
    bot, alice = users("bot"), users("alice")
    (home / "config.yaml").write_text(yaml.safe_dump({
        "model": {"provider": "custom", "base_url": fake_llm.openai_base_url,
                  "default": "fake-model", "max_retries": 0},
        "sessions": {"auto_title": False}, "gateway": {"stream_replies": False},
        "platforms": {"matrix": {"enabled": True, "sync_timeout": 5}}}))
    env = {**os.environ, "HERMES_HOME": str(home), "MATRIX_HOMESERVER": synapse.url,
           "MATRIX_ACCESS_TOKEN": bot.access_token, "MATRIX_ALLOWED_USERS": alice.user_id}

    def gateway() -> subprocess.Popen[str]:
        hermes = Path(sys.executable).parent / "hermes"
        return subprocess.Popen([str(hermes), "gateway", "run"], env=env, text=True,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    fake_llm.script(reply_text("first answer"), reply_text("never sent", delay=WAIT))
    first = gateway()
    try:
        dm = alice.create_room(invite=[bot.user_id], direct=True)
        _until(lambda: alice.members(dm).get(bot.user_id) == "join")
        alice.say(dm, "first")
        alice.wait(lambda: bodies(alice, dm, bot) == ["first answer"], WAIT)
        alice.say(dm, "second")  # its model call hangs
        _until(lambda: fake_llm.pending == 0)
        third = alice.say(dm, "third")  # waits behind it, in the inbox
        _until(lambda: third in _handed_over(home))
        first.send_signal(signal.SIGKILL)
        first.wait(WAIT)
    finally:
        if first.poll() is None:
            first.kill()

    fake_llm.script(reply_text("second answer"), reply_text("third answer"))
    second = gateway()
    try:
        alice.wait(lambda: len(bodies(alice, dm, bot)) >= 3, WAIT)
        second.send_signal(signal.SIGTERM)
        second.wait(WAIT)
    finally:
        if second.poll() is None:
            second.kill()
    alice.sync(timeout_ms=0)
    assert bodies(alice, dm, bot) == ["first answer", "second answer", "third answer"]
    posts = model_posts(fake_llm)
    assert [m["content"] for m in posts[-1].body["messages"] if m["role"] == "user"] == [
        "first", "second", "third"]  # one session, each message once, in order
    assert second.returncode == 0


def test_without_matrix_nio_the_platform_is_skipped_with_the_install_hint(home, fake_llm,
                                                                          monkeypatch):
    from hermes_agent.builtin_plugins.gateway.platforms import build_adapters

    monkeypatch.setitem(sys.modules, "nio", None)  # as if not installed
    k = make_kernel(home, builtins=True, config={"platforms": {"matrix": {"enabled": True}}},
                    env={"HERMES_HOME": str(home), "MATRIX_HOMESERVER": "http://127.0.0.1:9",
                         "MATRIX_ACCESS_TOKEN": "syt_x"})
    adapters, _, [problem] = build_adapters(k)
    assert adapters == {} and "pip install 'hermes-agent-runtime[platform-matrix]'" in problem


def test_a_refused_token_keeps_the_platform_down_with_a_clear_error(home, fake_llm, synapse,
                                                                    users, caplog):
    from hermes_agent.builtin_plugins.gateway.platforms import build_adapters
    from hermes_agent.builtin_plugins.gateway.runner import GatewayRunner

    bot, alice = users("bot"), users("alice")
    bot.access_token = "syt_not_a_real_token_4f2a9c"
    k = kernel(home, fake_llm, synapse, bot, [alice])

    async def scenario() -> list[str]:
        adapters, entries, _ = build_adapters(k)
        runner = GatewayRunner(k, adapters, entries=entries)
        try:
            return list(await runner.start())
        finally:
            await runner.stop(WAIT)

    with caplog.at_level("ERROR"):
        assert asyncio.run(scenario()) == []
    assert "refused MATRIX_ACCESS_TOKEN" in caplog.text
    assert "syt_not_a_real_token" not in caplog.text


def test_markdown_becomes_the_html_matrix_renders():
    from hermes_agent.plugins.platforms.matrix.formatting import to_html

    assert to_html("plain <text> & more\nline two") is None  # sent as body alone
    assert to_html("## Plan\n**bold**, *it*, ~~old~~ and `a<b`\n[docs](https://x.org/?a=1&b=2)"
                   ) == ("<h2>Plan</h2>\n<strong>bold</strong>, <em>it</em>, <del>old</del> and "
                         '<code>a&lt;b</code><br>\n<a href="https://x.org/?a=1&amp;b=2">docs</a>')
    assert to_html("```python\nif a < b:\n    pass\n```\nafter <script>") == (
        '<pre><code class="language-python">if a &lt; b:\n    pass</code></pre>'
        "after &lt;script&gt;")
    assert to_html("[x](javascript:alert(1)) **b**") == "[x](javascript:alert(1)) <strong>b</strong>"

"""The email platform against real servers on 127.0.0.1: dovecot for IMAP (started by the
tests from a generated config, mail delivered by IMAP APPEND) and aiosmtpd for SMTP. The
gateway runs in this process; the agent behind it talks to the fake model server."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import os
import signal
import socket
import sqlite3
import ssl
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from email.message import EmailMessage
from email.utils import make_msgid
from pathlib import Path
from typing import Any

import pytest
import yaml

from hermes_agent.api import session_store
from hermes_agent.testing import make_kernel
from hermes_agent.testing.fake_llm import FakeLLMServer, reply_text
from hermes_agent.testing.mail_servers import (Dovecot, MailServerUnavailable, SmtpSink,
                                               self_signed_certificate)

from .conftest import serving

pytest.importorskip("imapclient", reason="the email platform needs imapclient "
                    "(pip install 'hermes-agent-runtime[platform-email]')")
WAIT = 30.0
AGENT, PASSWORD = "agent@example.test", "agent-password"
ALICE, BOB, MALLORY = "alice@example.org", "bob@example.net", "mallory@example.com"
PNG = (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00"
       b"\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\xcf\xc0\xf0\x1f\x00\x05\x00\x01\xff"
       b"\x89\x99=\x1d\x00\x00\x00\x00IEND\xaeB`\x82")


@pytest.fixture(scope="module")
def dovecot() -> Iterator[Dovecot]:
    try:
        server = Dovecot({AGENT: PASSWORD}).start()
    except MailServerUnavailable as exc:
        pytest.skip(f"no IMAP server for the email tests: {exc}")
    try:
        yield server
    finally:
        server.close()


@dataclass
class AgentMailbox:
    """The agent's account on a dovecot: its address, and mail delivered into its INBOX."""

    server: Dovecot
    agent: str = AGENT

    @property
    def port(self) -> int:
        return self.server.port

    def append(self, message: EmailMessage) -> int:
        return self.server.append(self.agent, message)

    def seen(self) -> set[int]:
        return self.server.seen(self.agent)


@pytest.fixture
def imap(dovecot: Dovecot) -> AgentMailbox:
    """The shared dovecot with the agent's INBOX emptied for this test."""
    dovecot.empty(AGENT)
    return AgentMailbox(dovecot)


@pytest.fixture
def smtp(imap: AgentMailbox) -> Iterator[SmtpSink]:
    try:
        sink = SmtpSink({imap.agent: PASSWORD}).start()
    except MailServerUnavailable as exc:
        pytest.skip(f"no SMTP server for the email tests: {exc}")
    try:
        yield sink
    finally:
        sink.close()


def kernel(home: Path, llm: FakeLLMServer, imap: AgentMailbox, smtp: SmtpSink,
           env: dict[str, str] | None = None, plugins: tuple[Any, ...] = (),
           gateway: dict[str, Any] | None = None, vision: bool = False,
           **section: Any) -> Any:
    """A kernel with the email platform (``section``: more of ``platforms.email``)."""
    config = {"model": {"provider": "custom", "base_url": llm.openai_base_url,
                        "default": "fake-model", "max_retries": 0, "supports_vision": vision},
              "sessions": {"auto_title": False},
              "gateway": {"stream_replies": False, **(gateway or {})},
              "platforms": {"email": {
                  "enabled": True, "imap_host": "127.0.0.1", "imap_port": imap.port,
                  "imap_security": "none", "smtp_host": "127.0.0.1", "smtp_port": smtp.port,
                  "smtp_security": "none", "poll_interval": 0.5, **section}}}
    return make_kernel(home, config=config, builtins=True, plugins=list(plugins), env={
        "HERMES_HOME": str(home), "EMAIL_ADDRESS": imap.agent,
        "EMAIL_PASSWORD": PASSWORD, "EMAIL_ALLOWED_USERS": f"{ALICE},Bob@Example.net",
        **(env or {})})


def mail(sender: str, to: str, text: str, subject: str = "Hello", *,
         answering: EmailMessage | None = None, authenticated: bool = True,
         message_id: str | None = None, references: bool = True) -> EmailMessage:
    """A mail as the receiving server stores it (its Authentication-Results on top)."""
    message = EmailMessage()
    if authenticated:
        message["Authentication-Results"] = (
            f"mx.example.test; dmarc=pass header.from={sender.partition('@')[2]}")
    message["From"] = f"Someone <{sender}>"
    message["To"] = to
    message["Subject"] = subject if answering is None else (
        "Re: " + str(answering["Subject"]).removeprefix("Re: "))
    message["Message-ID"] = message_id or make_msgid(domain=sender.partition("@")[2])
    if answering is not None:
        refs = str(answering.get("References", "")).split() + [str(answering["Message-ID"])]
        message["In-Reply-To"] = str(answering["Message-ID"])
        if references:  # some programs send In-Reply-To alone
            message["References"] = " ".join(refs)
    message.set_content(text)
    return message


async def deliver(imap: AgentMailbox, message: EmailMessage) -> int:
    return await asyncio.to_thread(imap.append, message)


async def replies(smtp: SmtpSink, count: int, to: str) -> list[EmailMessage]:
    return [r.message for r in await asyncio.to_thread(smtp.wait_for, count, to, WAIT)]


async def until(check: Any, what: str) -> None:
    """Until ``check()`` (run in a thread: it may talk to a server) is true."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + WAIT
    while not await asyncio.to_thread(check):
        assert loop.time() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.05)


async def seen(imap: AgentMailbox, uids: set[int]) -> None:
    """Until every one of ``uids`` is marked \\Seen on the server."""
    await until(lambda: uids <= imap.seen(), f"mails {uids} marked seen")


def body(message: EmailMessage) -> str:
    return str(message.get_body(("plain",)).get_content())


@contextlib.asynccontextmanager
async def served(k: Any) -> AsyncIterator[tuple[Any, Any]]:
    async with serving(k, "email") as (runner, adapter):
        yield runner, adapter


def posts(server: FakeLLMServer) -> list[Any]:
    return [r for r in server.requests if r.method == "POST"]


def user_texts(request: Any) -> list[str]:
    return [m["content"] for m in request.body["messages"] if m["role"] == "user"]


def message_rows(home: Path) -> int:
    total = 0
    for path in home.rglob("*.db"):
        with contextlib.closing(sqlite3.connect(path)) as db:
            tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
            for table in {"messages", "mails"} & tables:
                total += db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
    return total


def ids(value: Any) -> list[str]:
    return str(value or "").split()


# --- sessions and threads ----------------------------------------------------------------------
def test_two_senders_in_two_threads_get_their_own_sessions(home, fake_llm, imap, smtp):
    fake_llm.script(*(reply_text(f"answer {n}") for n in range(5)))
    k = kernel(home, fake_llm, imap, smtp)

    async def scenario() -> None:
        async with served(k) as (runner, _):
            first = mail(ALICE, imap.agent, "I am alice", subject="Plans")
            uids = {await deliver(imap, first),
                    await deliver(imap, mail(BOB, imap.agent, "I am bob", subject="Lunch"))}
            [to_alice] = await replies(smtp, 1, ALICE)
            [to_bob] = await replies(smtp, 1, BOB)
            assert to_alice["In-Reply-To"] == first["Message-ID"]
            assert ids(to_alice["References"]) == [first["Message-ID"]]
            assert (to_alice["Subject"], to_bob["Subject"]) == ("Re: Plans", "Re: Lunch")
            assert to_alice["From"] == imap.agent and to_alice["Auto-Submitted"] == "auto-replied"
            await seen(imap, uids)  # taken: a restart does not answer them again
            # alice answers the agent's reply: the same thread, the same session
            await deliver(imap, mail(ALICE, imap.agent, "alice again", answering=to_alice))
            [_, again] = await replies(smtp, 2, ALICE)
            assert ids(again["References"])[0] == first["Message-ID"]
            assert again["Subject"] == "Re: Plans"
            # a new mail with a new subject is a new thread: a session of its own
            await deliver(imap, mail(ALICE, imap.agent, "another topic", subject="Taxes"))
            await replies(smtp, 3, ALICE)
            root = first["Message-ID"].strip("<>")
            alice = runner.chats[f"email:{ALICE}:{root}"]
            [bob] = [c for key, c in runner.chats.items() if key.startswith(f"email:{BOB}:")]
            taxes = [c for key, c in runner.chats.items()
                     if key.startswith(f"email:{ALICE}:") and c is not alice]
            assert len(runner.chats) == 3 and len(taxes) == 1
            assert len({alice.agent.session_id, bob.agent.session_id,
                        taxes[0].agent.session_id}) == 3

    asyncio.run(scenario())
    histories = sorted(user_texts(p) for p in posts(fake_llm))
    assert histories == [["[Subject: Lunch]\n\nI am bob"], ["[Subject: Plans]\n\nI am alice"],
                         ["[Subject: Plans]\n\nI am alice", "alice again"],
                         ["[Subject: Taxes]\n\nanother topic"]]
    assert len(session_store(k).list_sessions(source="email")) == 3


def test_handled_mail_is_not_answered_again_after_a_restart(home, fake_llm, imap, smtp):
    fake_llm.script(reply_text("noted"), reply_text("still here"))
    k = kernel(home, fake_llm, imap, smtp)
    first = mail(ALICE, imap.agent, "remember 7", subject="Memo")

    async def run(message: EmailMessage, count: int) -> list[EmailMessage]:
        async with served(k):
            await seen(imap, {await deliver(imap, message)})
            return await replies(smtp, count, ALICE)

    [reply] = asyncio.run(run(first, 1))
    [_, again] = asyncio.run(run(mail(ALICE, imap.agent, "what did I say?", answering=reply,
                                      references=False), 2))
    assert [body(m).strip() for m in (reply, again)] == [
        "noted", "still here"]
    assert user_texts(posts(fake_llm)[-1]) == ["[Subject: Memo]\n\nremember 7", "what did I say?"]
    assert len(posts(fake_llm)) == 2
    # after a restart, a reply naming only the agent's mail (no References) is in its thread
    assert again["In-Reply-To"] != reply["In-Reply-To"]
    assert ids(again["References"])[0] == first["Message-ID"]


def test_polling_without_idle_finds_new_mail(home, fake_llm, imap, smtp):
    fake_llm.script(reply_text("polled"))
    k = kernel(home, fake_llm, imap, smtp, idle=False, poll_interval=0.5)

    async def scenario() -> None:
        async with served(k) as (_, adapter):
            await asyncio.to_thread(adapter.connected_mailbox.wait, WAIT)
            await deliver(imap, mail(ALICE, imap.agent, "anyone?"))
            [reply] = await replies(smtp, 1, ALICE)
            assert body(reply).strip() == "polled"

    asyncio.run(scenario())


# --- who may write -----------------------------------------------------------------------------
def test_an_unknown_sender_is_refused_and_nothing_is_stored(home, fake_llm, imap, smtp):
    k = kernel(home, fake_llm, imap, smtp)

    async def scenario() -> None:
        async with served(k):
            attempt = mail(MALLORY, imap.agent, "let me in", subject="Hi")
            attempt.add_attachment(b"%PDF-1.4 secret", maintype="application", subtype="pdf",
                                   filename="plan.pdf")
            uid = await deliver(imap, attempt)
            [refusal] = await replies(smtp, 1, MALLORY)
            text = body(refusal)
            assert "not allowed" in text and MALLORY in text
            assert refusal["In-Reply-To"] == attempt["Message-ID"]
            await seen(imap, {uid})  # refused for good: not read again at the next start

    asyncio.run(scenario())
    assert posts(fake_llm) == []
    assert session_store(k).list_sessions() == []
    assert message_rows(home) == 0
    assert not (home / "gateway" / "media").exists()  # his attachment was never saved
    assert not (home / "gateway" / "sessions.json").exists()


def test_unauthenticated_and_automated_mail_is_dropped_unanswered(home, fake_llm, imap, smtp,
                                                                    caplog):
    fake_llm.script(reply_text("only this one"))
    k = kernel(home, fake_llm, imap, smtp)

    async def scenario() -> None:
        async with served(k):
            spoofed = mail(ALICE, imap.agent, "forged", authenticated=False)
            vacation = mail(BOB, imap.agent, "I am away")
            vacation["Auto-Submitted"] = "auto-replied"
            real = mail(ALICE, imap.agent, "genuine", subject="Re: x")
            uids = {await deliver(imap, m) for m in (spoofed, vacation, real)}
            [reply] = await replies(smtp, 1, ALICE)
            assert reply["In-Reply-To"] == real["Message-ID"]
            await seen(imap, uids)

    asyncio.run(scenario())
    assert [user_texts(p) for p in posts(fake_llm)] == [["genuine"]]
    assert smtp.to(BOB) == [] and len(smtp.to(ALICE)) == 1
    assert "not authenticated" in caplog.text and "require_authenticated_sender" in caplog.text


# --- replies -----------------------------------------------------------------------------------
def test_a_long_reply_goes_out_as_threaded_mails_in_text_and_html(home, fake_llm, imap, smtp):
    paragraphs = [f"**Part {n}.** " + " ".join(f"word{n}-{i}" for i in range(150))
                  for n in range(55)]
    answer = "\n\n".join(paragraphs)
    assert len(answer) > 50_000  # the limit of one mail, as in Hermes Agent 0.19
    fake_llm.script(reply_text(answer))
    k = kernel(home, fake_llm, imap, smtp)

    async def scenario() -> list[EmailMessage]:
        async with served(k):
            await deliver(imap, message := mail(ALICE, imap.agent, "write a lot",
                                                subject="Essay"))
            await until(lambda: any("word54-149" in body(r.message) for r in smtp.to(ALICE)),
                        "the last word")
            return [message["Message-ID"], *(r.message for r in smtp.to(ALICE))]

    root, *sent = asyncio.run(scenario())
    assert len(sent) >= 2
    plain = [body(m) for m in sent]
    assert all(len(text.rstrip("\n")) <= 50_000 for text in plain)
    assert " ".join(plain).split() == answer.split()
    for earlier, later in zip(sent, sent[1:]):  # each piece answers the one before it
        assert later["In-Reply-To"] == earlier["Message-ID"]
    assert all(ids(m["References"])[0] == root and m["Subject"] == "Re: Essay" for m in sent)
    assert all(m.get_content_type() == "multipart/alternative" for m in sent)
    html = sent[0].get_body(("html",)).get_content()
    assert "<strong>Part 0.</strong>" in html and "**" not in html


def test_an_smtp_451_is_retried_once_delivered(home, fake_llm, imap, smtp):
    fake_llm.script(reply_text("after a retry"))
    smtp.fail(451, "4.3.0 try again later")
    k = kernel(home, fake_llm, imap, smtp)

    async def scenario() -> None:
        async with served(k):
            await deliver(imap, mail(ALICE, imap.agent, "hello"))
            [reply] = await replies(smtp, 1, ALICE)
            assert body(reply).strip() == "after a retry"

    asyncio.run(scenario())
    assert len(smtp.to(ALICE)) == 1 and smtp.logins.count(imap.agent) >= 2


def test_an_smtp_550_is_not_sent_again(home, fake_llm, imap, smtp, caplog):
    fake_llm.script(reply_text("refused"))
    smtp.fail(550, "5.7.1 relaying denied")
    k = kernel(home, fake_llm, imap, smtp)

    async def scenario() -> None:
        async with served(k):
            await seen(imap, {await deliver(imap, mail(ALICE, imap.agent, "hello"))})
            await until(lambda: "550 5.7.1 relaying denied" in caplog.text, "the failure")

    asyncio.run(scenario())
    assert smtp.attempts == 1 and smtp.received == []


# --- attachments -------------------------------------------------------------------------------
def test_attachments_arrive_as_image_and_file_parts(home, fake_llm, imap, smtp):
    fake_llm.script(reply_text("got them"))
    events: list[Any] = []

    def watcher(ctx: Any) -> None:
        ctx.register_hook("pre_gateway_dispatch", lambda event, **_: events.append(event))
    watcher.__name__ = "watcher"
    k = kernel(home, fake_llm, imap, smtp, plugins=(watcher,), vision=True,
               max_attachment_bytes=50_000)

    async def scenario() -> None:
        async with served(k):
            message = mail(ALICE, imap.agent, "see attached", subject="Files")
            message.add_attachment(PNG, maintype="image", subtype="png", filename="dot.png")
            message.add_attachment(b"%PDF-1.4 report", maintype="application", subtype="pdf",
                                   filename="../../report.pdf")
            message.add_attachment(b"x" * 60_000, maintype="application",
                                   subtype="octet-stream", filename="huge.bin")
            await deliver(imap, message)
            await replies(smtp, 1, ALICE)

    asyncio.run(scenario())
    [event] = events
    image, document = event.attachments
    assert (image["type"], image["mime_type"], image["name"]) == ("image", "image/png", "dot.png")
    assert (document["type"], document["mime_type"]) == ("file", "application/pdf")
    assert Path(image["path"]).read_bytes() == PNG and image["size"] == len(PNG)
    assert Path(document["path"]).read_bytes() == b"%PDF-1.4 report"
    assert Path(document["path"]).parent.parent == home / "gateway" / "media" / "email"
    assert document["name"] == "report.pdf"  # no folder part
    assert oct(Path(image["path"]).stat().st_mode)[-3:] == "600"
    [part] = event.images  # the image part a model that sees is shown
    assert part["image_url"]["url"] == "data:image/png;base64," + base64.b64encode(PNG).decode()
    request = posts(fake_llm)[0]
    [user] = [m for m in request.body["messages"] if m["role"] == "user"]
    [text] = [p["text"] for p in user["content"] if p["type"] == "text"]
    [seen_image] = [p for p in user["content"] if p["type"] == "image_url"]
    assert seen_image["image_url"]["url"] == part["image_url"]["url"]
    assert (f"[image attached: dot.png (image/png, {len(PNG)} bytes) saved at "
            f"{image['path']}]") in text
    assert "[file attached: report.pdf" in text
    assert "[attachment left out: huge.bin (60 KB, over the 50 KB limit)]" in text


# --- durability --------------------------------------------------------------------------------
def gateway_process(home: Path, imap: AgentMailbox) -> subprocess.Popen[str]:
    hermes = Path(sys.executable).parent / "hermes"
    env = {**os.environ, "HERMES_HOME": str(home), "EMAIL_ADDRESS": imap.agent,
           "EMAIL_PASSWORD": PASSWORD, "EMAIL_ALLOWED_USERS": ALICE}
    return subprocess.Popen([str(hermes), "gateway", "run"], env=env, text=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def wait_for(check: Any, what: str, proc: subprocess.Popen[str]) -> Any:
    deadline = time.monotonic() + WAIT * 2
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        if proc.poll() is not None:
            raise AssertionError(f"the gateway exited ({proc.returncode}) before {what}: "
                                 f"{proc.stderr.read() if proc.stderr else ''}")
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_sigkill_mid_turn_loses_no_acknowledged_mail(home, fake_llm, imap, smtp):
    (home / "config.yaml").write_text(yaml.safe_dump({
        "model": {"provider": "custom", "base_url": fake_llm.openai_base_url,
                  "default": "fake-model", "max_retries": 0},
        "sessions": {"auto_title": False}, "gateway": {"stream_replies": False},
        "platforms": {"email": {
            "enabled": True, "imap_host": "127.0.0.1", "imap_port": imap.port,
            "imap_security": "none", "smtp_host": "127.0.0.1", "smtp_port": smtp.port,
            "smtp_security": "none"}}}))
    fake_llm.script(reply_text("first answer"), reply_text("never sent", delay=WAIT * 2))
    first = mail(ALICE, imap.agent, "first", subject="Plan")
    process = gateway_process(home, imap)
    try:
        imap.append(first)
        [answer] = [r.message for r in wait_for(lambda: smtp.to(ALICE), "the first answer",
                                                process)]
        uids = {imap.append(mail(ALICE, imap.agent, "second", answering=answer))}
        wait_for(lambda: fake_llm.pending == 0, "the second turn's model call", process)
        uids.add(imap.append(mail(ALICE, imap.agent, "third", answering=answer)))
        # acknowledged (\Seen) only once stored in the gateway's inbox
        wait_for(lambda: uids <= imap.seen(), "both mails marked seen", process)
        process.send_signal(signal.SIGKILL)
        process.wait(WAIT)
    finally:
        if process.poll() is None:
            process.kill()

    fake_llm.script(reply_text("second answer"), reply_text("third answer"))
    again = gateway_process(home, imap)
    try:
        wait_for(lambda: len(smtp.to(ALICE)) >= 3, "the replayed answers", again)
        again.send_signal(signal.SIGTERM)
        again.wait(WAIT)
    finally:
        if again.poll() is None:
            again.kill()
    sent = [r.message for r in smtp.to(ALICE)]
    assert [body(m).strip() for m in sent] == ["first answer", "second answer", "third answer"]
    assert all(ids(m["References"])[0] == first["Message-ID"] for m in sent)
    # one session, each mail in it once, in order
    assert user_texts(posts(fake_llm)[-1]) == ["[Subject: Plan]\n\nfirst", "second", "third"]
    assert again.returncode == 0


# --- TLS ---------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    try:
        return self_signed_certificate(tmp_path_factory.mktemp("tls"))
    except MailServerUnavailable as exc:
        pytest.skip(f"no certificate for the TLS tests: {exc}")


@contextlib.contextmanager
def tls_servers(certificate: tuple[Path, Path], implicit_smtp: bool) -> Iterator[
        tuple[AgentMailbox, SmtpSink]]:
    try:
        server = Dovecot({AGENT: PASSWORD}, tls=certificate).start()
    except MailServerUnavailable as exc:
        pytest.skip(f"no IMAP server for the email tests: {exc}")
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(*certificate)
    try:
        box = AgentMailbox(server)
        with SmtpSink({AGENT: PASSWORD}, tls=context, implicit_tls=implicit_smtp) as sink:
            yield box, sink
    finally:
        server.close()


@pytest.mark.parametrize(("imap_security", "smtp_security"), [("ssl", "starttls"),
                                                               ("starttls", "ssl")])
def test_tls_and_starttls_to_servers_with_a_private_ca(home, fake_llm, certificate,
                                                       imap_security, smtp_security):
    fake_llm.script(reply_text("over TLS"))
    with tls_servers(certificate, implicit_smtp=smtp_security == "ssl") as (server, sink):
        k = kernel(home, fake_llm, server, sink, imap_security=imap_security,
                   smtp_security=smtp_security, tls_ca_file=str(certificate[0]),
                   imap_port=server.server.tls_port if imap_security == "ssl" else server.port)

        async def scenario() -> None:
            async with served(k):
                await deliver(server, mail(ALICE, server.agent, "secure?"))
                [reply] = await replies(sink, 1, ALICE)
                assert body(reply).strip() == "over TLS"

        asyncio.run(scenario())
        assert sink.logins == [AGENT] * 2  # the check at start, the reply


def test_a_certificate_nobody_vouches_for_stops_the_platform(home, fake_llm, certificate,
                                                             caplog):
    from hermes_agent.builtin_plugins.gateway.platforms import build_adapters
    from hermes_agent.builtin_plugins.gateway.runner import GatewayRunner

    with tls_servers(certificate, implicit_smtp=False) as (server, sink):
        k = kernel(home, fake_llm, server, sink, imap_security="ssl",
                   imap_port=server.server.tls_port,
                   smtp_security="starttls")

        async def scenario() -> list[str]:
            adapters, entries, _ = build_adapters(k)
            runner = GatewayRunner(k, adapters, entries=entries)
            try:
                return await runner.start()
            finally:
                await runner.stop(WAIT)

        assert asyncio.run(scenario()) == []
        assert "IMAP server's certificate is not trusted" in caplog.text
        caplog.clear()
        k = kernel(home, fake_llm, server, sink, smtp_security="starttls")  # IMAP in plain text
        assert asyncio.run(scenario()) == []
    assert "SMTP server's certificate is not trusted" in caplog.text
    assert "tls_ca_file" in caplog.text


# --- hook parity -------------------------------------------------------------------------------
def test_an_email_turn_fires_the_hooks_of_a_chat_q_turn(home, fake_llm, imap, smtp):
    from hermes_agent.builtin_plugins.gateway.platforms import build_adapters
    from hermes_agent.builtin_plugins.gateway.runner import GatewayRunner

    from .test_hook_parity_surfaces import RECORDER, recorded, script

    plugin = home / "plugins" / "recorder"
    plugin.mkdir(parents=True)
    (plugin / "plugin.yaml").write_text("name: recorder\nversion: 1.0.0\n"
                                        "description: Records every hook.\n")
    (plugin / "__init__.py").write_text(RECORDER)
    (home / "config.yaml").write_text(yaml.safe_dump({
        "model": {"provider": "custom", "base_url": fake_llm.openai_base_url,
                  "default": "fake-model", "max_retries": 0},
        "sessions": {"auto_title": False}, "plugins": {"enabled": ["recorder"]},
        "gateway": {"stream_replies": False},
        "platforms": {"email": {
            "enabled": True, "imap_host": "127.0.0.1", "imap_port": imap.port,
            "imap_security": "none", "smtp_host": "127.0.0.1", "smtp_port": smtp.port,
            "smtp_security": "none"}}}))
    script(fake_llm)
    hermes = Path(sys.executable).parent / "hermes"
    run = subprocess.run([str(hermes), "chat", "-q", "what is 2 + 3?"], capture_output=True,
                         text=True, timeout=WAIT * 2, env={**os.environ, "HERMES_HOME": str(home)})
    assert run.returncode == 0, run.stderr
    cli = recorded(home)

    script(fake_llm)

    async def through_email() -> None:
        k = make_kernel(home, builtins=True, env={
            "HERMES_HOME": str(home), "EMAIL_ADDRESS": imap.agent, "EMAIL_PASSWORD": PASSWORD,
            "EMAIL_ALLOWED_USERS": ALICE})
        adapters, entries, problems = build_adapters(k)
        assert not problems, problems
        runner = GatewayRunner(k, adapters, entries=entries)
        assert await runner.start() == ["email"]
        try:
            await deliver(imap, mail(ALICE, imap.agent, "what is 2 + 3?", subject="Re: sums"))
            [reply] = await replies(smtp, 1, ALICE)
            assert body(reply).strip() == "5"
        finally:
            await runner.stop(WAIT)  # ends the chats' sessions, as the CLI does at exit
            k.close()

    asyncio.run(through_email())
    via_email = recorded(home)
    assert {"on_session_start", "pre_llm_call", "pre_tool_call", "post_tool_call",
            "on_session_end", "on_session_finalize"} <= {name for name, _ in cli}
    assert [name for name, _ in via_email] == [name for name, _ in cli]
    assert {p for _, p in via_email} - {""} == {"email"}


def test_a_full_chat_queue_leaves_mail_unseen_until_there_is_room(home, fake_llm, imap, smtp):
    from hermes_agent.testing.fake_llm import reply_tool_call

    from .conftest import Gate

    gate, handed = Gate(), []

    def plugin(ctx: Any) -> None:
        ctx.register_tool("wait_gate", "testing", {
            "name": "wait_gate", "description": "Wait for the gate.",
            "parameters": {"type": "object", "properties": {}}}, gate.handler)
        ctx.register_hook("pre_gateway_dispatch",
                          lambda event, **_: handed.append(event.message_id))
    plugin.__name__ = "gated"
    fake_llm.script(reply_tool_call("wait_gate"), reply_text("one"), reply_text("two"),
                    reply_text("three"))
    k = kernel(home, fake_llm, imap, smtp, plugins=(plugin,), gateway={"max_queue_per_chat": 1})
    root = mail(ALICE, imap.agent, "first", subject="Queue")
    later = [mail(ALICE, imap.agent, text, answering=root) for text in ("second", "third")]
    for message in (root, *later):  # all there before the gateway looks
        imap.append(message)
    third = later[1]["Message-ID"].strip("<>")

    async def scenario() -> None:
        async with served(k):
            await asyncio.to_thread(gate.entered.wait, WAIT)  # the first turn holds the chat
            await until(lambda: handed.count(third) >= 1, "the third mail handed over")
            gate.opened.set()
            await replies(smtp, 3, ALICE)

    asyncio.run(scenario())
    assert [body(r.message).strip() for r in smtp.to(ALICE)] == ["one", "two", "three"]
    assert handed.count(third) >= 2  # turned away while the queue was full, then taken
    assert user_texts(posts(fake_llm)[-1]) == ["[Subject: Queue]\n\nfirst", "second", "third"]


def test_idle_wakes_for_mail_that_came_before_or_while_it_waits(imap):
    from hermes_agent.plugins.platforms.email.mailbox import Mailbox
    from hermes_agent.plugins.platforms.email.settings import load

    settings = load({"imap_host": "127.0.0.1", "imap_port": imap.port, "imap_security": "none"},
                    {"EMAIL_ADDRESS": imap.agent, "EMAIL_PASSWORD": PASSWORD,
                     "EMAIL_SMTP_HOST": "127.0.0.1"})
    box, stopping = Mailbox(settings), threading.Event()
    box.open()
    try:
        assert box.idle_supported and box.unseen() == []
        imap.append(mail(ALICE, imap.agent, "between two looks"))
        started = time.monotonic()
        box.wait(WAIT, stopping)  # must not sit in IDLE: it came after the last look
        assert time.monotonic() - started < WAIT / 2
        box.mark_seen(*box.unseen())
        later = threading.Timer(0.3, imap.append, (mail(ALICE, imap.agent, "now"),))
        later.start()
        started = time.monotonic()
        box.wait(WAIT, stopping)
        later.join()
        assert time.monotonic() - started < WAIT / 2 and len(box.unseen()) == 1
        box.mark_seen(*box.unseen())
        threading.Timer(0.3, stopping.set).start()
        started = time.monotonic()
        box.wait(WAIT, stopping)  # nothing new: only stopping ends it
        assert time.monotonic() - started < WAIT / 2
    finally:
        box.close()


def test_a_target_that_is_not_one_address_is_refused_before_smtp(home, fake_llm, imap, smtp):
    k = kernel(home, fake_llm, imap, smtp)

    async def scenario() -> list[Any]:
        async with served(k) as (_, adapter):
            return [await adapter.send(target, "hi") for target in (
                "alice@example.org\r\nBcc: eve@example.com", "a@x.org, b@y.org", "nobody")]

    results = asyncio.run(scenario())
    assert [r.success for r in results] == [False] * 3
    assert all("not a mail address" in r.error for r in results) and smtp.received == []


def test_a_mail_over_the_size_limit_is_read_for_its_headers_only(home, fake_llm, imap, smtp):
    fake_llm.script(reply_text("too big"))
    k = kernel(home, fake_llm, imap, smtp, max_mail_bytes=3000)

    async def scenario() -> None:
        async with served(k):
            await deliver(imap, mail(ALICE, imap.agent, "x" * 5000, subject="Huge"))
            await replies(smtp, 1, ALICE)

    asyncio.run(scenario())
    [text] = user_texts(posts(fake_llm)[0])
    assert text.startswith("[Subject: Huge]\n\n[this mail has ") and "xxx" not in text
    assert "platforms.email.max_mail_bytes" in text


def test_idle_sees_a_change_sent_with_its_go_ahead(tmp_path):
    """A server may send ``* 1 EXISTS`` in the same packet as IDLE's ``+``: that line waits
    in the client's buffer, where polling the socket never finds it. (A scripted IMAP server
    on 127.0.0.1 sends it so every time; dovecot does it only now and then.)"""
    from hermes_agent.plugins.platforms.email.mailbox import Mailbox
    from hermes_agent.plugins.platforms.email.settings import load

    listener = socket.create_server(("127.0.0.1", 0))
    commands: list[str] = []

    def serve() -> None:
        conn, _ = listener.accept()
        with conn, conn.makefile("rb") as lines:
            conn.sendall(b"* OK [CAPABILITY IMAP4rev1 IDLE] ready\r\n")
            idle_tag = ""
            for raw in lines:
                line = raw.decode().strip()
                commands.append(line)
                if line.upper() == "DONE":
                    conn.sendall(f"{idle_tag} OK IDLE done\r\n".encode())
                    continue
                tag, _, rest = line.partition(" ")
                verb = rest.split(" ", 1)[0].upper()
                answer = {"CAPABILITY": "* CAPABILITY IMAP4rev1 IDLE\r\n",
                          "SELECT": "* 0 EXISTS\r\n* OK [UIDVALIDITY 7] ok\r\n",
                          "UID": "* SEARCH\r\n", "LOGOUT": "* BYE\r\n"}.get(verb, "")
                if verb == "IDLE":
                    idle_tag = tag
                    conn.sendall(b"+ idling\r\n* 1 EXISTS\r\n")  # in one write
                    continue
                conn.sendall(f"{answer}{tag} OK {verb} done\r\n".encode())
                if verb == "LOGOUT":
                    return

    server = threading.Thread(target=serve, daemon=True)
    server.start()
    settings = load({"imap_host": "127.0.0.1", "imap_port": listener.getsockname()[1],
                     "imap_security": "none"},
                    {"EMAIL_ADDRESS": AGENT, "EMAIL_PASSWORD": PASSWORD,
                     "EMAIL_SMTP_HOST": "127.0.0.1"})
    box = Mailbox(settings)
    box.open()
    try:
        started = time.monotonic()
        box.wait(10, threading.Event())
        assert time.monotonic() - started < 5
        assert "DONE" in commands
    finally:
        box.close()
        server.join(WAIT)
        listener.close()

"""The email plugin's parts that need no server: the settings, reading a received mail
(sender, thread, text, attachments, whether its sender is authenticated) and composing a
reply (threading headers, text and HTML)."""

from __future__ import annotations

from email.message import EmailMessage

import pytest

from hermes_agent.plugins.platforms.email.formatting import to_html
from hermes_agent.plugins.platforms.email.inbound import (html_to_text, parse, safe_filename,
                                                          strip_quoted)
from hermes_agent.plugins.platforms.email.outbound import compose, reply_subject
from hermes_agent.plugins.platforms.email.settings import SettingsError, load
from hermes_agent.plugins.platforms.email.threads import MailContext

ENV = {"EMAIL_ADDRESS": "agent@example.test", "EMAIL_PASSWORD": "pw",
       "EMAIL_IMAP_HOST": "imap.example.test", "EMAIL_SMTP_HOST": "smtp.example.test"}


# --- settings ----------------------------------------------------------------------------------
def test_the_original_variables_configure_it_with_its_defaults():
    s = load({}, ENV)
    assert (s.address, s.imap_host, s.smtp_host) == ("agent@example.test", "imap.example.test",
                                                     "smtp.example.test")
    assert (s.imap_port, s.imap_security, s.smtp_port, s.smtp_security) == (993, "ssl", 587,
                                                                            "starttls")
    assert s.poll_interval == 15 and s.max_message_length == 50_000
    assert s.require_authenticated_sender and "pw" not in repr(s)
    s = load({"smtp_port": 465, "imap_port": 143}, {**ENV, "EMAIL_POLL_INTERVAL": "60"})
    assert (s.smtp_security, s.imap_security, s.poll_interval) == ("ssl", "starttls", 60)


def test_config_yaml_and_its_extra_win_over_the_environment():
    s = load({"extra": {"imap_host": "mail.example.org"}, "address": "me@example.org"}, ENV)
    assert (s.imap_host, s.address, s.login) == ("mail.example.org", "me@example.org",
                                                 "me@example.org")


@pytest.mark.parametrize(("config", "env", "says"), [
    ({}, {**ENV, "EMAIL_PASSWORD": ""}, "EMAIL_PASSWORD"),
    ({}, {k: v for k, v in ENV.items() if k != "EMAIL_SMTP_HOST"}, "EMAIL_SMTP_HOST"),
    ({"password": "x"}, ENV, "do not put the mail password in config.yaml"),
    ({"imap_security": "none"}, ENV, "in the clear to imap.example.test"),
    ({"smtp_security": "tls13"}, ENV, "must be one of ssl, starttls, none"),
    ({"imap_port": "nan"}, ENV, "imap_port must be a"),
    ({}, {**ENV, "EMAIL_ADDRESS": "agent"}, "must be a mail address"),
])
def test_settings_that_cannot_work_say_what_to_set(config, env, says):
    with pytest.raises(SettingsError, match=says):
        load(config, env)


def test_the_sender_check_is_off_when_asked_or_when_anyone_may_write():
    assert not load({}, {**ENV, "EMAIL_TRUST_FROM_HEADER": "true"}).require_authenticated_sender
    assert not load({"require_authenticated_sender": False}, ENV).require_authenticated_sender
    assert not load({}, {**ENV, "EMAIL_ALLOW_ALL_USERS": "true"}).require_authenticated_sender
    assert load({"imap_security": "none", "imap_host": "127.0.0.1"}, ENV).imap_security == "none"


# --- reading mail ------------------------------------------------------------------------------
def received(text: str = "hello", **headers: str) -> bytes:
    message = EmailMessage()
    message["From"] = headers.pop("From", "Alice <Alice@Example.org>")
    message["Subject"] = headers.pop("Subject", "Hi")
    message["Message-ID"] = headers.pop("Message_ID", "<m1@example.org>")
    for name, value in headers.items():
        message[name.replace("_", "-")] = value
    message.set_content(text)
    return message.as_bytes()


def test_a_reply_belongs_to_the_thread_its_references_start():
    mail = parse(received(References="<root@x> <mid@x>", In_Reply_To="<mid@x>"))
    assert (mail.sender, mail.sender_name, mail.message_id) == ("alice@example.org", "Alice",
                                                                "m1@example.org")
    assert (mail.thread_root, mail.starts_thread) == ("root@x", False)
    assert parse(received(In_Reply_To="<mid@x>")).thread_root == "mid@x"
    assert parse(received()).thread_root == "m1@example.org"
    assert parse(received(Message_ID=""), fallback_id="7.3@imap").message_id == "7.3@imap"


@pytest.mark.parametrize(("headers", "automated"), [
    ({}, False), ({"Auto_Submitted": "auto-replied"}, True), ({"Auto_Submitted": "no"}, False),
    ({"Precedence": "bulk"}, True), ({"List_Id": "<list.example.org>"}, True),
    ({"From": "noreply@example.org"}, True), ({"From": "MAILER-DAEMON@example.org"}, True),
    ({"From": "agent@example.test"}, True), ({"From": "a@x.org, b@y.org"}, True),
])
def test_automated_mail_and_our_own_are_recognised(headers, automated):
    assert parse(received(**headers), own_address="agent@example.test").automated is automated


@pytest.mark.parametrize(("results", "ok"), [
    ("mx.example.test; dmarc=pass header.from=example.org", True),
    ("mx.example.test; spf=pass smtp.mailfrom=bounce@mail.example.org", True),
    ("mx.example.test; dkim=pass header.d=example.org", True),
    ("mx.example.test; dkim=pass header.d=evil.example", False),
    ("mx.example.test; spf=fail smtp.mailfrom=example.org; dmarc=fail", False),
    (None, False),
])
def test_the_sender_counts_as_authenticated_only_as_the_server_says(results, ok):
    headers = {"Authentication_Results": results} if results else {}
    assert parse(received(**headers)).authenticated is ok


def test_only_the_topmost_or_the_named_servers_verdict_counts():
    forged = EmailMessage()
    forged["Authentication-Results"] = "mx.example.test; dmarc=fail header.from=example.org"
    forged["Authentication-Results"] = "mx.example.test; dmarc=pass header.from=example.org"
    forged["From"] = "alice@example.org"
    forged.set_content("x")
    assert not parse(forged.as_bytes()).authenticated
    assert not parse(forged.as_bytes(), authserv_id="other.example").authenticated


def test_quoted_history_is_cut_and_html_only_mail_is_read_as_text():
    assert strip_quoted("Yes, do it.\n\nOn Mon, 1 Dec 2026, Agent wrote:\n> Shall I?\n> ok") \
        == "Yes, do it."
    assert strip_quoted("Top.\n\nOn Tue someone wrote:\n> old\n\nmore") == "Top."
    assert strip_quoted("> only a quote") == "> only a quote"
    assert html_to_text("<p>One &amp; <b>two</b></p><p>three<br>four</p><style>x{}</style>") \
        == "One & two\nthree\nfour"


def test_attachment_names_are_names_only():
    assert safe_filename("../../etc/passwd", "text/plain", 1) == "passwd"
    assert safe_filename("C:\\temp\\x.exe", "application/x", 1) == "x.exe"
    assert safe_filename("...", "image/png", 3) == "attachment-3.png"
    assert safe_filename("a\x00b\nc.txt", "text/plain", 1) == "a_b_c.txt"


def test_a_file_named_like_an_image_is_not_an_image_part():
    message = EmailMessage()
    message["From"] = "alice@example.org"
    message.set_content("x")
    message.add_attachment(b"not a png", maintype="image", subtype="png", filename="fake.png")
    [attachment] = parse(message.as_bytes()).attachments
    assert attachment.kind == "file"


# --- composing replies -------------------------------------------------------------------------
def test_a_reply_answers_in_its_thread_as_text_and_html():
    settings = load({}, ENV)
    earlier = MailContext("m2@example.org", "alice@example.org", "root@x", "Re: RE: Plans",
                          ("root@x", "m1@x"))
    message = compose(settings, "alice@example.org", "**Yes.** See `x < y`.", earlier)
    assert message["Subject"] == "Re: Plans"
    assert message["In-Reply-To"] == "<m2@example.org>"
    assert message["References"] == "<root@x> <m1@x> <m2@example.org>"
    assert str(message["Message-ID"]).endswith("@example.test>")
    assert message.get_content_type() == "multipart/alternative"
    assert message.get_body(("plain",)).get_content().strip() == "**Yes.** See `x < y`."
    assert "<strong>Yes.</strong> See <code>x &lt; y</code>." in \
        message.get_body(("html",)).get_content()
    plain_only = compose(load({"html": False}, ENV), "bob@example.net", "hi", None)
    assert plain_only.get_content_type() == "text/plain"
    assert plain_only["Subject"] == "Message from Hermes" and "In-Reply-To" not in plain_only


def test_a_reply_whose_mail_is_not_known_here_still_names_its_thread():
    message = compose(load({}, ENV), "alice@example.org", "hi", None, thread_root="root@x")
    assert (message["In-Reply-To"], message["References"]) == ("<root@x>", "<root@x>")


def test_references_stay_bounded_keeping_the_root():
    earlier = MailContext("last@x", "a@x", "r0@x", "s", tuple(f"r{n}@x" for n in range(40)))
    refs = str(compose(load({}, ENV), "a@x", "t", earlier)["References"]).split()
    assert len(refs) == 20 and refs[0] == "<r0@x>" and refs[-1] == "<last@x>"


@pytest.mark.parametrize(("subject", "expected"), [
    ("Plans", "Re: Plans"), ("Re: Plans", "Re: Plans"), ("AW: Re: Plans", "Re: Plans"),
    ("", "Message from Hermes")])
def test_reply_subjects_carry_one_re(subject, expected):
    assert reply_subject(subject) == expected


def test_markdown_becomes_safe_html():
    html = to_html("# Title\n\n- one\n- **two**\n\n1. first\n2. second\n\n```\n<tag>\n```\n\n"
                   "[link](https://e.com/?a=1&b=2) [bad](javascript:alert(1)) <script>")
    assert to_html("## Steps\nfirst this").count("<h2>Steps</h2>\n<p>first this</p>") == 1
    assert "<h1>Title</h1>" in html and "<ul><li>one</li><li><strong>two</strong></li></ul>" in html
    assert "<ol><li>first</li><li>second</li></ol>" in html
    assert "<code>&lt;tag&gt;</code></pre>" in html
    assert '<a href="https://e.com/?a=1&amp;b=2">link</a>' in html
    assert "javascript:" in html and '<a href="javascript' not in html and "<script>" not in html


# --- the thread store --------------------------------------------------------------------------
def test_a_message_id_another_sender_reuses_stays_his_own(tmp_path):
    from hermes_agent.plugins.platforms.email.threads import ThreadStore

    store = ThreadStore(tmp_path)
    alice = MailContext("m1@x", "alice@example.org", "m1@x", "Plans", ())
    store.record(alice, outgoing=False)
    store.accept("m1@x", "alice@example.org")
    store.record(MailContext("m1@x", "bob@example.net", "m1@x", "Mine now", ()), outgoing=False)
    assert store.accepted("m1@x", "alice@example.org")
    assert not store.accepted("m1@x", "bob@example.net")  # not skipped as a duplicate
    assert store.get("m1@x", "alice@example.org") == alice
    assert store.root_of("bob@example.net", "m1@x") == "m1@x"
    reply = MailContext("r1@agent", "alice@example.org", "m1@x", "Re: Plans", ("m1@x",))
    store.record(reply, outgoing=True)
    assert store.latest("alice@example.org", "m1@x") == reply
    assert store.root_of("carol@example.com", "r1@agent") is None  # not her thread
    store.forget("m1@x", "bob@example.net")
    assert store.get("m1@x", "bob@example.net") is None and store.get("m1@x", "alice@example.org")
    assert oct((tmp_path / "gateway").stat().st_mode)[-3:] == "700"
    store.close()


def test_unpaired_markers_do_not_make_the_html_slow():
    import time

    started = time.monotonic()
    html = to_html(" ".join(["*a"] * 20_000) + "\n" + " ".join(["**b"] * 20_000))
    assert time.monotonic() - started < 5  # was quadratic: minutes for this line
    assert "<em>" not in html and html.count("*") == 60_000

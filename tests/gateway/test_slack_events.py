"""Which Slack events the agent sees, and as which chat (plugins/platforms/slack/events.py),
on events shaped as Slack sends them."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from hermes_agent.plugins.platforms.slack.events import addressed
from hermes_agent.plugins.platforms.slack.settings import Settings

BOT, BOT_ID = "UBOT0001", "BBOT0001"
BASE = Settings(bot_token="xoxb-t", app_token="xapp-t")


def event(text: str = "hello", **fields: Any) -> dict[str, Any]:
    return {"type": "message", "channel": "C0CHAN", "user": "U0ALICE1", "text": text,
            "ts": "1700000000.000100", "channel_type": "channel", **fields}


def see(ev: dict[str, Any], engaged: set[tuple[str, str]] | None = None, **settings: Any):
    return addressed(ev, dataclasses.replace(BASE, **settings), BOT, BOT_ID, engaged or set())


def test_a_dm_is_always_seen_and_stays_in_the_dm() -> None:
    found = see(event(channel="D0DM", channel_type="im"))
    assert found is not None and (found.channel, found.thread_ts, found.chat_type) == (
        "D0DM", None, "dm")


def test_a_channel_needs_a_mention_and_is_answered_in_a_thread() -> None:
    assert see(event()) is None
    found = see(event(f"<@{BOT}> what now?"))
    assert found is not None and found.text == "what now?"
    assert (found.thread_ts, found.chat_type) == ("1700000000.000100", "thread")
    assert see(event("mention", type="app_mention")) is not None
    flat = see(event(f"<@{BOT}> hi"), reply_in_thread=False)
    assert flat is not None and (flat.thread_ts, flat.chat_type) == (None, "group")


def test_free_channels_engaged_threads_and_the_channel_allow_list() -> None:
    assert see(event(), free_response_channels=frozenset({"C0CHAN"})) is not None
    assert see(event(), require_mention=False) is not None
    in_thread = event(thread_ts="1600000000.000001")
    assert see(in_thread) is None
    assert see(in_thread, engaged={("C0CHAN", "1600000000.000001")}) is not None
    assert see(event(f"<@{BOT}> hi"), allowed_channels=frozenset({"C0OTHER"})) is None
    dm = event(channel="D0DM", channel_type="im")
    assert see(dm, allowed_channels=frozenset({"C0OTHER"})) is not None  # DMs are exempt


@pytest.mark.parametrize("subtype", ["message_changed", "message_deleted", "channel_join"])
def test_edits_deletions_and_joins_are_not_read(subtype: str) -> None:
    assert see(event(channel="D0DM", channel_type="im", subtype=subtype)) is None


def test_file_shares_and_thread_broadcasts_are_read() -> None:
    for subtype in ("file_share", "thread_broadcast"):
        assert see(event(channel="D0DM", channel_type="im", subtype=subtype)) is not None


@pytest.mark.parametrize(("allow_bots", "plain", "mentioning"), [
    ("none", False, False), ("mentions", False, True), ("all", True, True)])
def test_other_bots_only_as_allow_bots_says(allow_bots: str, plain: bool,
                                            mentioning: bool) -> None:
    other = {"bot_id": "BOTHER01", "user": "U0OTHERB"}
    assert (see(event("status: ok", **other), require_mention=False,
                allow_bots=allow_bots) is not None) is plain
    assert (see(event(f"<@{BOT}> ping", **other), allow_bots=allow_bots)
            is not None) is mentioning


def test_the_bots_own_messages_are_never_read() -> None:
    assert see(event(f"<@{BOT}> echo", user=BOT), allow_bots="all") is None
    assert see(event(f"<@{BOT}> echo", bot_id=BOT_ID, user="U0SOMEONE"),
               allow_bots="all") is None


def test_files_come_along() -> None:
    files = [{"id": "F1", "name": "a.png", "mimetype": "image/png"}]
    found = see(event(channel="D0DM", channel_type="im", subtype="file_share", files=files))
    assert found is not None and found.files == files

"""Which Slack events the agent sees, and as which chat. Pure functions of an event (the
``event`` of an Events API ``event_callback``, as Socket Mode and HTTP both deliver it) and
the settings; the adapter downloads the files and hands the message to the gateway.

- ``message`` (new messages and ``file_share``, ``thread_broadcast``) and ``app_mention``
  events are read; edits, deletions, joins and the other subtypes are not.
- The bot's own messages are never read; other bots' and apps' only with ``allow_bots``.
- A direct message (``channel_type`` ``im``) is always read. In a channel, group DM or private
  channel a message is read when it mentions the bot, when the channel is in
  ``free_response_channels`` (or ``require_mention`` is off), or when it is in a thread the bot
  already talks in; with ``allowed_channels`` set, other channels are ignored (DMs are not).
- The chat is the channel; a thread is its own chat (``thread_id`` = the thread's
  ``thread_ts``). A top-level channel message is answered in a thread of its own (with
  ``reply_in_thread``), so that thread is its session from the start."""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from .settings import Settings

READ_SUBTYPES = (None, "", "file_share", "thread_broadcast", "me_message")
BOT_SUBTYPES = ("bot_message",)


@dataclass(frozen=True)
class Addressed:
    """An event the agent must see: where it came from and where the answer goes."""

    channel: str
    user: str
    ts: str
    text: str  # the bot's mention taken out
    thread_ts: str | None  # the chat's thread (None: the channel itself, in a DM)
    chat_type: str  # "dm", "group" or "thread"
    files: list[dict[str, Any]]


def message_key(event: Mapping[str, Any]) -> tuple[str, str]:
    """The same message, whether it came as ``message`` or ``app_mention``."""
    return str(event.get("channel") or ""), str(event.get("ts") or event.get("event_ts") or "")


def addressed(event: Mapping[str, Any], settings: Settings, bot_user: str, bot_id: str,
              engaged: Collection[tuple[str, str]]) -> Addressed | None:
    """The event as a message for the agent, or None when the agent must not see it."""
    kind = event.get("type")
    if kind not in ("message", "app_mention") or event.get("subtype") not in (
            *READ_SUBTYPES, *BOT_SUBTYPES):
        return None
    user = str(event.get("user") or "")
    channel, ts = message_key(event)
    if not channel or not ts or (user and user == bot_user):
        return None
    text = str(event.get("text") or "")
    mention = f"<@{bot_user}>" if bot_user else ""
    mentioned = kind == "app_mention" or bool(mention and mention in text)
    from_bot = bool(event.get("bot_id")) or event.get("subtype") in BOT_SUBTYPES
    if from_bot and (event.get("bot_id") == bot_id or settings.allow_bots == "none"
                     or (settings.allow_bots == "mentions" and not mentioned)):
        return None
    if not user:  # a bot message without a user (an old integration): no one to answer to
        return None
    is_dm = event.get("channel_type") == "im" or channel.startswith("D")
    thread = str(event.get("thread_ts") or "") or None
    if not is_dm:
        if settings.allowed_channels and channel not in settings.allowed_channels:
            return None
        free = (not settings.require_mention) or channel in settings.free_response_channels
        if not (mentioned or free or (thread and (channel, thread) in engaged)):
            return None
        if thread is None and settings.reply_in_thread:
            thread = ts  # answered in the message's own thread: that thread is the session
    if mention:
        text = text.replace(mention, " ")
    files = [dict(f) for f in event.get("files") or [] if isinstance(f, Mapping)]
    kind = "thread" if thread else ("dm" if is_dm else "group")
    return Addressed(channel=channel, user=user, ts=ts, thread_ts=thread, chat_type=kind,
                     text=re.sub(r"[ \t]{2,}", " ", text).strip(), files=files)

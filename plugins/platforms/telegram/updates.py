"""Telegram updates as the gateway's ``InboundMessage``: a new or edited message with text
(or a caption) in a private chat, a group, a supergroup (its forum topics become threads) or
a channel; a photo or an image file counts as a message without a caption too (its bytes are
fetched by the adapter, :mod:`.media`), and so does a voice note or audio file (the adapter
transcribes it). Everything else (joins, polls, stickers without a caption) yields None."""

from __future__ import annotations

from collections.abc import Mapping, Set
from typing import Any

from hermes_agent.api import InboundMessage

from .media import image_file

PLATFORM = "telegram"
CHAT_TYPES = {"private": "dm", "group": "group", "supergroup": "group", "channel": "channel"}
UPDATE_KINDS = ("message", "edited_message")  # what getUpdates and setWebhook ask for


def voice_of(message: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The voice note or audio file a message carries (``file_id``, ``mime_type``, ...)."""
    for key in ("voice", "audio"):
        if isinstance(message.get(key), Mapping) and message[key].get("file_id"):
            return message[key]
    return None


def message_of(update: Mapping[str, Any]) -> Mapping[str, Any]:
    return next((update[k] for k in UPDATE_KINDS if isinstance(update.get(k), Mapping)), {})


def chat_type(telegram_type: str) -> str:
    return CHAT_TYPES.get(telegram_type, "group")


def inbound(update: Mapping[str, Any], allowed_chats: Set[str] = frozenset()
            ) -> InboundMessage | None:
    """The message ``update`` carries, or None when it carries none the agent can answer
    (or comes from a group not in ``allowed_chats``, when that is set)."""
    message = next((update[k] for k in UPDATE_KINDS if isinstance(update.get(k), Mapping)),
                   None)
    if message is None:
        return None
    text = message.get("text") or message.get("caption") or ""
    chat = message.get("chat") or {}
    sender = message.get("from") or {}
    if (not (text or image_file(message) or voice_of(message)) or "id" not in chat
            or "id" not in sender or sender.get("is_bot")):
        return None
    kind = chat_type(str(chat.get("type", "")))
    if allowed_chats and kind != "dm" and str(chat["id"]) not in allowed_chats:
        return None
    thread = message.get("message_thread_id") if message.get("is_topic_message") else None
    return InboundMessage(
        PLATFORM, str(chat["id"]), str(sender["id"]), str(text),
        user_name=str(sender.get("username") or ""),
        thread_id=str(thread) if thread is not None else None,
        message_id=str(message["message_id"]) if "message_id" in message else None,
        chat_type=kind, raw=dict(update))

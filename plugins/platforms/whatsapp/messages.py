"""The messages in a Cloud API webhook notification (``entry[].changes[].value.messages[]``,
field ``messages``), for this phone number (and business account, when set). Delivery
statuses and other fields carry no message and yield nothing. Media (image, document, audio,
video, sticker) comes by id: :class:`Received` lists what to download."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

MEDIA_KINDS = ("image", "document", "audio", "video", "sticker")


@dataclass
class Received:
    message_id: str
    sender: str  # the wa_id: the sender's phone number, digits only
    name: str  # the profile name WhatsApp shows
    text: str
    media: list[dict[str, Any]] = field(default_factory=list)  # {"id", "mime_type", "filename"}
    raw: dict[str, Any] = field(default_factory=dict)


def received(notification: Mapping[str, Any], phone_number_id: str,
             waba_id: str = "") -> Iterator[Received]:
    if notification.get("object") not in (None, "whatsapp_business_account"):
        return
    for entry in _dicts(notification.get("entry")):
        if waba_id and str(entry.get("id", "")) != waba_id:
            continue
        for change in _dicts(entry.get("changes")):
            value = change.get("value")
            if change.get("field") != "messages" or not isinstance(value, Mapping):
                continue
            metadata = value.get("metadata") or {}
            if str(metadata.get("phone_number_id", "")) != phone_number_id:
                continue
            names = {str(c.get("wa_id")): str((c.get("profile") or {}).get("name") or "")
                     for c in _dicts(value.get("contacts"))}
            for message in _dicts(value.get("messages")):
                item = _one(message, names)
                if item is not None:
                    yield item


def _one(message: Mapping[str, Any], names: Mapping[str, str]) -> Received | None:
    sender, message_id = str(message.get("from") or ""), str(message.get("id") or "")
    if not sender or not message_id:
        return None
    kind = str(message.get("type") or "")
    body = message.get(kind) if isinstance(message.get(kind), Mapping) else {}
    text, media = "", []
    if kind == "text":
        text = str(body.get("body") or "")
    elif kind in MEDIA_KINDS:
        text = str(body.get("caption") or "")
        if body.get("id"):
            media.append({"id": str(body["id"]), "mime_type": str(body.get("mime_type") or ""),
                          "filename": str(body.get("filename") or f"{kind}")})
    elif kind == "button":  # a quick-reply button of a template
        text = str(body.get("text") or "")
    elif kind == "interactive":
        reply = body.get("button_reply") or body.get("list_reply") or {}
        text = str(reply.get("title") or "")
    if not text and not media:
        return None
    return Received(message_id, sender, names.get(sender, ""), text, media, dict(message))


def _dicts(value: Any) -> list[Mapping[str, Any]]:
    return [item for item in value if isinstance(item, Mapping)] if isinstance(value, list) \
        else []

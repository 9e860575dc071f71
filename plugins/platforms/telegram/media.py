"""Images users send on Telegram (a photo, or an image sent as a file) as the image parts of
their ``InboundMessage`` (docs/vision.md): the largest size of a photo, downloaded through
the Bot API and passed on as a ``data:`` URL, which the agent stores by reference."""

from __future__ import annotations

import base64
import logging
from collections.abc import Mapping
from typing import Any

from .bot_api import BotAPI, TelegramError

log = logging.getLogger("hermes_agent.gateway.telegram")
MAX_BYTES = 20_000_000  # what the Bot API lets bots download; the agent applies its own limit
IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")


def image_file(message: Mapping[str, Any]) -> tuple[str, str, str] | None:
    """``(file_id, name, media type)`` of the image ``message`` carries, or None."""
    photo = message.get("photo")
    if isinstance(photo, list) and photo:
        sizes = [p for p in photo if isinstance(p, Mapping) and p.get("file_id")]
        if sizes:
            best = max(sizes, key=lambda p: int(p.get("width") or 0) * int(p.get("height") or 0)
                       or int(p.get("file_size") or 0))
            return str(best["file_id"]), "photo.jpg", "image/jpeg"
    document = message.get("document")
    if isinstance(document, Mapping) and document.get("file_id") \
            and str(document.get("mime_type") or "") in IMAGE_TYPES:
        return (str(document["file_id"]), str(document.get("file_name") or "image"),
                str(document["mime_type"]))
    return None


async def image_parts(api: BotAPI, update: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The image parts of ``update``'s message (downloaded); a failed download is logged and
    becomes a text note, so the turn says what went missing."""
    message = next((update[k] for k in ("message", "edited_message")
                    if isinstance(update.get(k), Mapping)), None)
    found = image_file(message) if message is not None else None
    if found is None:
        return []
    file_id, name, media = found
    try:
        data = await api.download(file_id, MAX_BYTES)
    except TelegramError as exc:
        log.warning("telegram: could not download an image: %s", exc)
        return [{"type": "text", "text": f"[image not attached: {exc}]"}]
    url = f"data:{media};base64,{base64.b64encode(data).decode('ascii')}"
    return [{"type": "image_url", "image_url": {"url": url}, "image": {"name": name}}]

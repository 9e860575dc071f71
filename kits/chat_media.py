"""Owner: the builtin plugin `gateway`. The files a chat message carries, as the content parts
an ``InboundMessage`` hands the agent (``attachments``), in OpenAI's chat format: an image as
an ``image_url`` part with a data URL; a small text file (source, CSV, JSON, ...) as a
``text`` part holding its content, which every model reads; anything else as a ``file`` part
(``filename``, ``file_data``), also named in the message's text, so a model whose API cannot
take the file still knows it came. The media type is taken from the bytes when they say (a
platform's declared type can be wrong), else the declared one. Not part of the contract
docs/api.md locks (docs/kits.md)."""

from __future__ import annotations

import base64
import logging
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

log = logging.getLogger("hermes_agent.gateway")
#: One attachment to fetch: its name, its declared media type, and how to get its bytes (and
#: the media type the download declares, or "").
Pending = tuple[str, str, Callable[[], Awaitable[tuple[bytes, str]]]]

#: the largest attachment a platform downloads by default (``max_attachment_bytes``)
MAX_ATTACHMENT_BYTES = 20_000_000
MAX_INLINE_TEXT = 100_000  # a text file up to this size goes to the model as text
TEXT_TYPES = ("application/json", "application/xml", "application/yaml", "application/x-yaml",
              "application/toml", "application/javascript", "application/x-sh",
              "application/x-python", "application/sql", "application/csv")
IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
_MAGIC = ((b"\x89PNG\r\n\x1a\n", "image/png"), (b"\xff\xd8\xff", "image/jpeg"),
          (b"GIF87a", "image/gif"), (b"GIF89a", "image/gif"), (b"%PDF-", "application/pdf"))


def sniff_media_type(data: bytes, declared: str = "") -> str:
    """The media type the bytes show (PNG, JPEG, GIF, WebP, PDF), else ``declared`` (its
    parameters dropped), else ``application/octet-stream``."""
    for magic, media_type in _MAGIC:
        if data.startswith(magic):
            return media_type
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return declared.split(";")[0].strip().lower() or "application/octet-stream"


def attachment_part(data: bytes, declared_type: str = "", name: str = "") -> dict[str, Any]:
    """One attachment as a content part: an image the models can see, a small text file's
    content as text, else a file."""
    media_type = sniff_media_type(data, declared_type)
    url = f"data:{media_type};base64,{base64.b64encode(data).decode()}"
    if media_type in IMAGE_TYPES:
        return {"type": "image_url", "image_url": {"url": url}}
    text = _text_of(data, media_type)
    if text is not None:
        return {"type": "text", "text": f"[file {name or 'attachment'}]\n```\n{text}\n```"}
    return {"type": "file", "file": {"filename": name or "attachment", "file_data": url}}


def _text_of(data: bytes, media_type: str) -> str | None:
    if len(data) > MAX_INLINE_TEXT or not (media_type.startswith("text/")
                                          or media_type in TEXT_TYPES):
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return None if "\x00" in text or "```" in text else text


def skipped_note(name: str, why: str) -> str:
    """The line a message's text gets for an attachment that is not passed on."""
    return f"[attachment {name or 'without a name'} not received: {why}]"


def with_notes(text: str, notes: list[str]) -> str:
    return "\n".join(part for part in (text, *notes) if part)


async def fetch_attachments(pending: Iterable[Pending]) -> tuple[list[dict[str, Any]], list[str]]:
    """Each attachment downloaded, as a part; one that cannot be (too large, gone) becomes a
    note for the message's text instead (:func:`with_notes`)."""
    parts: list[dict[str, Any]] = []
    notes: list[str] = []
    for name, declared, fetch in pending:
        try:
            data, served_type = await fetch()
        except Exception as exc:
            log.warning("gateway: attachment %s not received: %s", name, exc)
            notes.append(skipped_note(name, str(exc)))
            continue
        part = attachment_part(data, declared or served_type, name)
        parts.append(part)
        if part["type"] == "file":
            media_type = part["file"]["file_data"][5:].split(";", 1)[0]
            notes.append(f"[attached file: {name} ({media_type}, {len(data)} bytes)]")
    return parts, notes

"""Owner: the builtin plugin `gateway`. The files a chat message carries, as an
``InboundMessage`` hands them on: an image the models can see as an ``image_url`` part with a
data URL (``images``: the agent stores it, docs/vision.md); a small text file (source, CSV,
JSON, ...) as its content in the message's text, which every model reads; anything else saved
under the platform's media folder (``attachments``: ``type``, ``path``, ``name``,
``mime_type``, ``size``) and named in the text with its path, so the agent can open it with
its tools. The media type is taken from the bytes when they say (a platform's declared type
can be wrong), else the declared one. Not part of the contract docs/api.md locks
(docs/kits.md)."""

from __future__ import annotations

import base64
import hashlib
import logging
import os
import re
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hermes_agent import private_dir

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


@dataclass
class Fetched:
    """What a message's attachments became: image parts, saved files, lines for its text."""

    images: list[dict[str, Any]] = field(default_factory=list)
    files: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def take_attachment(fetched: Fetched, data: bytes, declared_type: str, name: str,
                    folder: Path) -> None:
    """One attachment into ``fetched``: an image part, a text file's content, or a file saved
    in ``folder`` (named by its hash, so a resent file is stored once)."""
    media_type = sniff_media_type(data, declared_type)
    name = name or "attachment"
    if media_type in IMAGE_TYPES:
        fetched.images.append({"type": "image_url", "image": {"name": name}, "image_url": {
            "url": f"data:{media_type};base64,{base64.b64encode(data).decode()}"}})
        return
    text = _text_of(data, media_type)
    if text is not None:
        fetched.notes.append(f"[file {name}]\n```\n{text}\n```")
        return
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", name)[-80:] or "attachment"
    target = private_dir(folder) / f"{hashlib.sha256(data).hexdigest()[:16]}-{safe}"
    with os.fdopen(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as out:
        out.write(data)  # the user's file: private
    fetched.files.append({"type": "file", "path": str(target), "name": name,
                          "mime_type": media_type, "size": len(data)})
    fetched.notes.append(f"[attached file: {name} ({media_type}, {len(data)} bytes), saved at "
                         f"{target}]")


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


def image_parts(attachments: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The downloaded attachments a model can be shown (PNG, JPEG, GIF, WebP, judged by their
    bytes) as ``image_url`` parts with a ``data:`` URL, for ``InboundMessage.images``."""
    parts = []
    for attachment in attachments:
        try:
            data = Path(str(attachment.get("path"))).read_bytes() if attachment.get("path") else b""
        except OSError:
            continue
        media_type = sniff_media_type(data, str(attachment.get("mime_type") or ""))
        if data and media_type in IMAGE_TYPES:
            parts.append({"type": "image_url", "image": {"name": attachment.get("name")},
                          "image_url": {"url": f"data:{media_type};base64,"
                                               f"{base64.b64encode(data).decode()}"}})
    return parts


async def fetch_attachments(pending: Iterable[Pending], folder: Path) -> Fetched:
    """Each attachment downloaded and taken (:func:`take_attachment`, files saved in
    ``folder``); one that cannot be (too large, gone) becomes a note for the message's text
    instead (:func:`with_notes`)."""
    fetched = Fetched()
    for name, declared, fetch in pending:
        try:
            data, served_type = await fetch()
        except Exception as exc:
            log.warning("gateway: attachment %s not received: %s", name, exc)
            fetched.notes.append(skipped_note(name, str(exc)))
            continue
        take_attachment(fetched, data, declared or served_type, name, folder)
    return fetched

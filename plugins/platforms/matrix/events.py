"""Matrix room events as the gateway sees them: which ones reach the agent, their text without
the bot's mention, their thread, and their attachments (``m.image``, ``m.file``, ``m.audio``,
``m.video``) as image or file parts. Works on the events' JSON (``event.source``), so it does
not depend on matrix-nio's classes."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

PLATFORM = "matrix"
TEXT_TYPES = ("m.text", "m.emote")  # m.notice is what bots send: never answered
MEDIA_TYPES = {"m.image": "image", "m.file": "file", "m.audio": "file", "m.video": "file"}
_MXC = re.compile(r"^mxc://([^/]+)/([A-Za-z0-9_-]+)$")


@dataclass(frozen=True)
class Attachment:
    """A media event's file: ``kind`` ``image`` or ``file``; ``server``/``media_id`` from its
    ``mxc://`` URL (None for an encrypted file, which this platform cannot read)."""

    kind: str
    name: str
    mime_type: str
    size: int | None
    url: str
    server: str | None
    media_id: str | None


def content(event: Mapping[str, Any]) -> Mapping[str, Any]:
    value = event.get("content")
    return value if isinstance(value, Mapping) else {}


def is_edit(event: Mapping[str, Any]) -> bool:
    relates = content(event).get("m.relates_to")
    return isinstance(relates, Mapping) and relates.get("rel_type") == "m.replace"


def thread_root(event: Mapping[str, Any]) -> str | None:
    relates = content(event).get("m.relates_to")
    if isinstance(relates, Mapping) and relates.get("rel_type") == "m.thread":
        root = relates.get("event_id")
        return str(root) if root else None
    return None


def attachment(event: Mapping[str, Any]) -> Attachment | None:
    body = content(event)
    kind = MEDIA_TYPES.get(str(body.get("msgtype")))
    if kind is None:
        return None
    info = body.get("info") if isinstance(body.get("info"), Mapping) else {}
    url = str(body.get("url") or "")
    match = _MXC.match(url)
    size = info.get("size")
    name = str(body.get("filename") or body.get("body") or "attachment")
    return Attachment(kind, name, str(info.get("mimetype") or "application/octet-stream"),
                      size if isinstance(size, int) and size >= 0 else None, url,
                      match.group(1) if match else None, match.group(2) if match else None)


def caption(event: Mapping[str, Any]) -> str:
    """A media event's caption: its ``body`` when a separate ``filename`` is given (MSC2530)."""
    body = content(event)
    filename, text = body.get("filename"), str(body.get("body") or "")
    return text.strip() if filename and text and text != filename else ""


def mentions(event: Mapping[str, Any], me: str, display_name: str = "") -> bool:
    """Whether the event mentions the bot: ``m.mentions``, its id, a pill, or its name."""
    body = content(event)
    listed = body.get("m.mentions")
    if isinstance(listed, Mapping) and me in (listed.get("user_ids") or []):
        return True
    text = f"{body.get('body') or ''} {body.get('formatted_body') or ''}"
    if me in text or f"matrix.to/#/{me}" in text:
        return True
    localpart = me[1:].split(":", 1)[0]
    names = {n for n in (display_name, localpart) if n}
    return any(re.search(rf"(?<![\w@]){re.escape(n)}(?!\w)", str(body.get("body") or ""),
                         re.IGNORECASE) for n in names)


def text_without_mention(event: Mapping[str, Any], me: str, display_name: str = "") -> str:
    text = str(content(event).get("body") or "")
    if is_reply_fallback(text):
        text = strip_reply_fallback(text)
    for name in filter(None, (me, display_name)):
        text = re.sub(rf"^\s*{re.escape(name)}\s*[:,]?\s*", "", text, flags=re.IGNORECASE)
    return text.replace(me, "").strip()


def is_reply_fallback(text: str) -> bool:
    return text.startswith("> <")


def strip_reply_fallback(text: str) -> str:
    """A reply's body without the quoted lines older clients put first (``> <@a:b> ...``)."""
    lines = text.splitlines()
    while lines and lines[0].startswith(">"):
        lines.pop(0)
    return "\n".join(lines).strip()


def describe(part: Mapping[str, Any]) -> str:
    """The line the model reads for an attachment part."""
    size = f", {part['size']} bytes" if part.get("size") is not None else ""
    where = (f" saved at {part['path']}" if part.get("path")
             else f" not downloaded: {part['note']}" if part.get("note") else "")
    return f"[{part['type']}: {part['name']} ({part['mime_type']}{size}){where}]"

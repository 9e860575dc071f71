"""Images users attach on Discord as the image parts of their ``InboundMessage``
(docs/vision.md): each image attachment (``content_type`` image/png, jpeg, gif or webp)
downloaded from Discord's CDN, without the bot's token, and passed on as a ``data:`` URL,
which the agent stores by reference."""

from __future__ import annotations

import base64
import logging
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

import httpx2

log = logging.getLogger("hermes_agent.gateway.discord")
IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
CDN_HOSTS = ("cdn.discordapp.com", "media.discordapp.net")
MAX_BYTES = 25_000_000  # Discord's own upload limit; the agent applies vision.max_image_bytes


def is_image(attachment: Any) -> bool:
    return isinstance(attachment, Mapping) and str(
        attachment.get("content_type") or "").split(";")[0] in IMAGE_TYPES


async def image_parts(data: Mapping[str, Any], api_base: str) -> list[dict[str, Any]]:
    """The image attachments of a ``MESSAGE_CREATE``, downloaded (from Discord's CDN, or the
    API's own host: a self-hosted or fake Discord); a failed one becomes a text note."""
    images = [a for a in data.get("attachments") or () if is_image(a)]
    if not images:
        return []
    allowed = {*CDN_HOSTS, urlsplit(api_base).hostname}
    parts: list[dict[str, Any]] = []
    async with httpx2.AsyncClient(trust_env=False, follow_redirects=False,
                                  timeout=httpx2.Timeout(30.0, connect=10.0)) as http:
        for attachment in images:
            name = str(attachment.get("filename") or "image")
            url = str(attachment.get("url") or "")
            try:
                body = await _download(http, url, allowed)
            except (httpx2.HTTPError, ValueError) as exc:
                log.warning("discord: could not download the attachment %s: %s", name, exc)
                parts.append({"type": "text", "text": f"[image not attached: {name}: {exc}]"})
                continue
            media = str(attachment["content_type"]).split(";")[0]
            parts.append({"type": "image_url", "image": {"name": name}, "image_url": {
                "url": f"data:{media};base64,{base64.b64encode(body).decode('ascii')}"}})
    return parts


async def _download(http: httpx2.AsyncClient, url: str, allowed: set[str | None]) -> bytes:
    if urlsplit(url).hostname not in allowed:
        raise ValueError(f"not a Discord attachment URL: {url[:80]}")
    async with http.stream("GET", url) as response:
        if response.status_code != 200:
            raise ValueError(f"HTTP {response.status_code}")
        body = bytearray()
        async for piece in response.aiter_bytes():
            body += piece
            if len(body) > MAX_BYTES:
                raise ValueError(f"more than {MAX_BYTES} bytes")
        return bytes(body)

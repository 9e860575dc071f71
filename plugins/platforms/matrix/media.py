"""Attachments in: an ``m.image`` / ``m.file`` (``m.audio``, ``m.video``) event's file is
downloaded from the homeserver's authenticated media API (``/_matrix/client/v1/media``, with the
bot's token; the older unauthenticated ``/_matrix/media/v3`` when the server predates it) into
``$HERMES_HOME/gateway/matrix/media/``, at most ``max_attachment_bytes``, and becomes a part
``{"type": "image"|"file", "name", "mime_type", "size", "url", "path"}`` (``note`` instead of
``path`` when it was not downloaded)."""

from __future__ import annotations

import hashlib
import logging
import re
from typing import Any
from urllib.parse import quote

import httpx2

from hermes_agent import private_dir

from .events import Attachment

log = logging.getLogger("hermes_agent.gateway.matrix")
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


class TooLarge(Exception):
    pass


async def download_part(adapter: Any, media: Attachment, event_id: str) -> dict[str, Any]:
    """``media`` downloaded by the ``MatrixAdapter`` ``adapter`` (its settings, state folder
    and client) as an attachment dict; ``note`` instead of ``path`` when it was not."""
    part: dict[str, Any] = {"type": media.kind, "name": media.name,
                            "mime_type": media.mime_type, "size": media.size, "url": media.url}
    limit = adapter.settings.max_attachment_bytes
    if media.server is None or media.media_id is None:
        part["note"] = "an encrypted or malformed file (not supported)"
        return part
    if media.size is not None and media.size > limit:
        part["note"] = f"larger than max_attachment_bytes ({limit})"
        return part
    digest = hashlib.sha256(event_id.encode()).hexdigest()[:16]
    name = _UNSAFE.sub("_", media.name).strip("._") or "attachment"
    folder = private_dir(adapter.state.folder / "media" / digest)
    path = folder / name[:120]
    try:
        size = await _fetch(adapter, media, path, limit)
    except TooLarge:
        path.unlink(missing_ok=True)
        part["note"] = f"larger than max_attachment_bytes ({limit})"
        return part
    except (httpx2.HTTPError, OSError, RuntimeError) as exc:
        path.unlink(missing_ok=True)
        log.warning("matrix: could not download %s: %s", media.url, exc)
        part["note"] = f"the download failed ({type(exc).__name__})"
        return part
    part.update(size=size, path=str(path))
    return part


async def _fetch(adapter: Any, media: Attachment, path: Any, limit: int) -> int:
    s = adapter.settings
    token = adapter.client.access_token
    tail = f"{quote(media.server or '', safe='')}/{quote(media.media_id or '', safe='')}"
    urls = (f"{s.homeserver}/_matrix/client/v1/media/download/{tail}",
            f"{s.homeserver}/_matrix/media/v3/download/{tail}")
    async with httpx2.AsyncClient(timeout=60.0, follow_redirects=True) as http:
        for url in urls:
            async with http.stream("GET", url, headers={"Authorization": f"Bearer {token}"},
                                   params={"allow_redirect": "true"}) as answer:
                if answer.status_code in (400, 404, 405) and url is urls[0]:
                    continue  # a homeserver without authenticated media: the older API
                if answer.status_code != 200:
                    raise RuntimeError(f"HTTP {answer.status_code}")
                size = 0
                with open(path, "wb") as out:
                    async for chunk in answer.aiter_bytes():
                        size += len(chunk)
                        if size > limit:
                            raise TooLarge()
                        out.write(chunk)
                return size
    raise RuntimeError("no media API answered")

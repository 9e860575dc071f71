"""Discord's REST API over httpx: the gateway URL, sending and editing messages, the typing
indicator and a channel's details. Failures become :class:`SendResult`s: a 429, a 5xx or a
connection that never reached Discord are ``retryable`` (nothing was delivered); any other
error is not. The token travels in the ``Authorization`` header only, never in a message."""

from __future__ import annotations

import logging
from typing import Any

import httpx2

from hermes_agent.api import SendResult

from .settings import TOKEN_ENV, Settings

log = logging.getLogger("hermes_agent.gateway.discord")
VOICE_MESSAGE_FLAG = 8192  # IS_VOICE_MESSAGE: the attachment is a recorded voice note
CDN_HOSTS = frozenset({"cdn.discordapp.com", "media.discordapp.net"})
USER_AGENT = "DiscordBot (https://github.com/hermes-agent/hermes, 0.1)"


class DiscordAuthError(RuntimeError):
    """Discord refused the token."""


class DiscordREST:
    def __init__(self, settings: Settings, timeout: float = 30.0):
        self.base = settings.api_base
        self._http = httpx2.AsyncClient(
            headers={"Authorization": f"Bot {settings.token}", "User-Agent": USER_AGENT},
            trust_env=False, follow_redirects=False,
            timeout=httpx2.Timeout(timeout, connect=min(timeout, 10.0)))

    async def close(self) -> None:
        await self._http.aclose()

    async def gateway_url(self) -> str:
        """``GET /gateway/bot``'s ``url``; :class:`DiscordAuthError` on a refused token."""
        response = await self._http.get(f"{self.base}/gateway/bot")
        if response.status_code == 401:
            raise DiscordAuthError(f"Discord refused the bot token (HTTP 401); check "
                                   f"{TOKEN_ENV}")
        response.raise_for_status()
        return str(response.json()["url"])

    async def create_message(self, channel_id: str, content: str,
                             reply_to: str | None = None) -> SendResult:
        body: dict[str, Any] = {"content": content}
        if reply_to:  # a reply to a deleted message still goes out
            body["message_reference"] = {"message_id": reply_to, "fail_if_not_exists": False}
        return await self._send("POST", f"/channels/{channel_id}/messages", body)

    async def edit_message(self, channel_id: str, message_id: str, content: str) -> SendResult:
        return await self._send("PATCH", f"/channels/{channel_id}/messages/{message_id}",
                                {"content": content})

    async def typing(self, channel_id: str) -> None:
        result = await self._send("POST", f"/channels/{channel_id}/typing", None)
        if not result.success:
            log.debug("discord: typing indicator failed: %s", result.error)

    async def channel(self, channel_id: str) -> dict[str, Any] | None:
        try:
            response = await self._http.get(f"{self.base}/channels/{channel_id}")
        except httpx2.HTTPError as exc:
            log.warning("discord: GET /channels/%s failed: %s", channel_id, type(exc).__name__)
            return None
        return _json(response) if response.status_code == 200 else None

    async def upload(self, channel_id: str, path: str, reply_to: str | None = None,
                     voice_seconds: float | None = None) -> SendResult:
        """The file at ``path`` as an attachment (``files[0]`` beside ``payload_json``);
        with ``voice_seconds``, an Ogg/Opus file as a voice message (flag 8192, its duration
        and a flat waveform: the audio is not decoded here)."""
        import base64
        import json
        import mimetypes
        from pathlib import Path

        file = Path(path)
        attachment: dict[str, Any] = {"id": 0, "filename": file.name}
        body: dict[str, Any] = {"attachments": [attachment]}
        if voice_seconds is not None:
            body["flags"] = VOICE_MESSAGE_FLAG
            attachment.update(filename="voice-message.ogg", duration_secs=round(voice_seconds, 2),
                              waveform=base64.b64encode(bytes([128] * 64)).decode())
        if reply_to:
            body["message_reference"] = {"message_id": reply_to, "fail_if_not_exists": False}
        kind = mimetypes.guess_type(file.name)[0] or "application/octet-stream"
        with open(file, "rb") as content:
            return await self._send("POST", f"/channels/{channel_id}/messages", None,
                                    data={"payload_json": json.dumps(body)},
                                    files={"files[0]": (attachment["filename"], content, kind)})

    async def download(self, url: str, max_bytes: int) -> bytes:
        """An attachment's bytes, from Discord's CDN (or the API's own host) only, and
        without the bot token (the CDN needs none; no other host ever sees it)."""
        from urllib.parse import urlsplit

        host = urlsplit(url).hostname or ""
        if host not in {*CDN_HOSTS, urlsplit(self.base).hostname}:
            raise ValueError(f"not downloading an attachment from {host!r}: not Discord's CDN")
        async with httpx2.AsyncClient(trust_env=False, follow_redirects=False,
                                      timeout=httpx2.Timeout(60.0, connect=10.0)) as client:
            response = await client.get(url)
        if response.status_code != 200:
            raise ValueError(f"downloading the attachment failed: HTTP {response.status_code}")
        if len(response.content) > max_bytes:
            raise ValueError(f"the attachment is over {max_bytes} bytes")
        return response.content

    async def _send(self, method: str, path: str, body: Any, **upload: Any) -> SendResult:
        try:
            response = await self._http.request(method, f"{self.base}{path}",
                                                json=body if not upload else None, **upload)
        except (httpx2.ConnectError, httpx2.ConnectTimeout) as exc:  # never reached Discord
            return SendResult(False, error=f"cannot reach Discord: {type(exc).__name__}",
                              retryable=True)
        except httpx2.HTTPError as exc:  # it may have arrived: do not send it twice
            return SendResult(False, error=f"Discord did not answer: {type(exc).__name__}")
        status = response.status_code
        if status < 300:
            data = response.json() if response.content else {}
            return SendResult(True, message_id=str(data.get("id") or "") or None, raw=data)
        data = _json(response)
        error = f"HTTP {status}: {data.get('message') or response.reason_phrase}"
        if status == 429:
            return SendResult(False, error=error, retryable=True,
                              retry_after=_retry_after(data, response.headers), raw=data)
        if status == 401:
            error += f" (Discord refused the bot token; check {TOKEN_ENV})"
        return SendResult(False, error=error, retryable=status >= 500, raw=data)


def _json(response: Any) -> dict[str, Any]:
    try:
        data = response.json()
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def _retry_after(data: dict[str, Any], headers: Any) -> float | None:
    for value in (data.get("retry_after"), headers.get("retry-after")):
        try:
            if value is not None:
                return max(0.0, float(value))
        except (TypeError, ValueError):
            continue
    return None

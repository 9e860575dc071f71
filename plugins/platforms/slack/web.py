"""Slack's Web API through slack-sdk's ``AsyncWebClient`` (``base_url`` is
``platforms.slack.api_base``): who the bot is, posting and editing messages, a channel's
details, and downloading a message's files with the bot token. Failures become
:class:`SendResult`s: a 429 (``ratelimited``), a 5xx or a request that never reached Slack are
``retryable`` (nothing was posted); any other error is not. The token travels in the
``Authorization`` header only, never in a log line or an error."""

from __future__ import annotations

import logging
import mimetypes
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from hermes_agent.api import SendResult

from .settings import Settings

log = logging.getLogger("hermes_agent.gateway.slack")
_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")


class SlackAuthError(RuntimeError):
    """Slack refused a token; the message names the variable to fix."""


@dataclass
class Downloaded:
    path: Path
    size: int


class SlackWeb:
    def __init__(self, settings: Settings, timeout: int = 30):
        """Built on the running loop (its HTTP session belongs to it)."""
        self.settings = settings
        self._session = aiohttp.ClientSession()  # one connection pool for every call
        self.client = AsyncWebClient(token=settings.bot_token, base_url=settings.api_base,
                                     timeout=timeout, session=self._session)
        # the Socket Mode client's own: it only opens connections, with the app-level token
        self.socket_client = AsyncWebClient(base_url=settings.api_base, timeout=timeout,
                                            session=self._session)

    async def close(self) -> None:
        await self._session.close()

    async def whoami(self) -> dict[str, Any]:
        """``auth.test``: the bot's ``user_id``, ``team_id``...; SlackAuthError on a refused
        token."""
        try:
            response = await self.client.auth_test()
        except SlackApiError as exc:
            raise SlackAuthError(f"Slack refused SLACK_BOT_TOKEN ({_error(exc)}); copy the "
                                 "Bot User OAuth Token (xoxb-...) again") from None
        return dict(response.data) if isinstance(response.data, dict) else {}

    async def socket_url(self) -> str:
        """``apps.connections.open``: a fresh Socket Mode websocket URL."""
        try:
            response = await self.socket_client.apps_connections_open(
                app_token=self.settings.app_token)
        except SlackApiError as exc:
            raise SlackAuthError(f"Slack refused SLACK_APP_TOKEN ({_error(exc)}); it must be "
                                 "an app-level token (xapp-...) with connections:write, and "
                                 "Socket Mode must be on for the app") from None
        return str(response["url"])

    async def post(self, channel: str, text: str, thread_ts: str | None) -> SendResult:
        return await self._send("chat_postMessage", channel=channel, text=text,
                                thread_ts=thread_ts or None, mrkdwn=True)

    async def update(self, channel: str, ts: str, text: str) -> SendResult:
        return await self._send("chat_update", channel=channel, ts=ts, text=text)

    async def _send(self, method: str, **kwargs: Any) -> SendResult:
        kwargs = {k: v for k, v in kwargs.items() if v is not None}
        try:
            response = await getattr(self.client, method)(**kwargs)
        except SlackApiError as exc:
            status = exc.response.status_code
            retry_after = _retry_after(exc)
            return SendResult(False, error=f"{method}: {_error(exc)} (HTTP {status})",
                              retryable=status == 429 or status >= 500,
                              retry_after=retry_after)
        except (aiohttp.ClientError, TimeoutError) as exc:
            return SendResult(False, error=f"{method}: {type(exc).__name__}", retryable=True)
        data = response.data if isinstance(response.data, dict) else {}
        return SendResult(True, message_id=str(data.get("ts") or "") or None, raw=data)

    async def channel(self, channel: str) -> dict[str, Any] | None:
        try:
            response = await self.client.conversations_info(channel=channel)
        except (SlackApiError, aiohttp.ClientError, TimeoutError) as exc:
            log.warning("slack: conversations.info %s failed: %s", channel,
                        _error(exc) if isinstance(exc, SlackApiError) else type(exc).__name__)
            return None
        found = response.get("channel")
        return found if isinstance(found, dict) else None

    def may_download(self, url: str) -> bool:
        """The bot token goes only to Slack's own hosts (or the configured API's)."""
        parts = urlsplit(url)
        host = (parts.hostname or "").lower()
        api_host = (urlsplit(self.settings.api_base).hostname or "").lower()
        slack = parts.scheme == "https" and (host == "slack.com" or host.endswith(".slack.com"))
        return slack or (bool(host) and host == api_host)

    async def download(self, url: str, folder: Path, name: str, limit: int) -> Downloaded | None:
        """The file at ``url`` saved in ``folder``; None when it is larger than ``limit``
        bytes (the part read so far is removed) or Slack would not give it."""
        folder.mkdir(parents=True, exist_ok=True)
        target = folder / (_UNSAFE_NAME.sub("_", name).strip("._") or "file")
        headers = {"Authorization": f"Bearer {self.settings.bot_token}"}
        size = 0
        try:
            async with self._session.get(url, headers=headers, allow_redirects=False,
                                         timeout=aiohttp.ClientTimeout(total=120)) as resp:
                if resp.status != 200:
                    log.warning("slack: downloading %s failed: HTTP %s (is the files:read scope "
                                "granted?)", name, resp.status)
                    return None
                if resp.content_length is not None and resp.content_length > limit:
                    return None
                with open(target, "wb") as out:
                    async for chunk in resp.content.iter_chunked(65536):
                        size += len(chunk)
                        if size > limit:
                            break
                        out.write(chunk)
        except (aiohttp.ClientError, TimeoutError, OSError) as exc:
            log.warning("slack: downloading %s failed: %s", name, type(exc).__name__)
            target.unlink(missing_ok=True)
            return None
        if size > limit:
            target.unlink(missing_ok=True)
            return None
        return Downloaded(target, size)


def guess_type(name: str, mime_type: str | None) -> str:
    return mime_type or mimetypes.guess_type(name)[0] or "application/octet-stream"


def _error(exc: SlackApiError) -> str:
    try:
        return str(exc.response.get("error") or "error")
    except Exception:
        return "error"


def _retry_after(exc: SlackApiError) -> float | None:
    try:
        value = exc.response.headers.get("Retry-After")
        return float(value) if value is not None else None
    except (TypeError, ValueError, AttributeError):
        return None

"""The Mattermost adapter: ``posted`` events arrive on the websocket (``/api/v4/websocket``,
the token in its ``Authorization`` header), replies go out with ``POST /api/v4/posts`` and grow
in place with ``PUT /api/v4/posts/{id}/patch`` while the model writes; attached files come
from ``/api/v4/files/{id}``. A channel is a chat (``mattermost:<channel id>``), a thread one of
its own (``mattermost:<channel id>:<root post id>``), answered in the thread. In public and
private channels the bot answers when mentioned (``@name``), unless ``require_mention`` is off
or the channel is a free-response one; direct and group messages need no mention. Once a
message is in the gateway's inbox, the channel is marked viewed (the sender sees it read)."""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hermes_agent.api import ChatInfo, InboundMessage, SendResult
from hermes_agent.kits.chat_api import (ChatAPI, ChatAPIError, FatalConnectionError,
                                        ReceivingAdapter, Receiver, RecentIds)
from hermes_agent.kits.chat_media import Pending, fetch_attachments, with_notes

from .catchup import PostCursor, missed_posts
from .settings import TOKEN_ENV, Settings

log = logging.getLogger("hermes_agent.gateway.mattermost")
PLATFORM = "mattermost"
CHAT_TYPES = {"D": "dm", "G": "group", "O": "group", "P": "group"}
# The websockets library logs frames at DEBUG, the token included: its own logger, never below
# INFO.
_WS_LOG = logging.getLogger("hermes_agent.gateway.mattermost.websocket")
_WS_LOG.setLevel(logging.INFO)


class MattermostAdapter(ReceivingAdapter):
    name = PLATFORM
    supports_streaming = True

    def __init__(self, config: Any, settings: Settings, cursor_path: Path):
        super().__init__(config)
        self.settings = settings
        self.media = cursor_path.parent / "media" / PLATFORM  # files neither images nor text
        self.cursor = PostCursor(cursor_path)
        self.max_message_length = settings.max_message_length
        self.api: ChatAPI | None = None
        self.me: dict[str, Any] = {}
        self.connected = asyncio.Event()  # the websocket said hello
        self._seen = RecentIds()
        self.receiver = Receiver(self, self._listen, self._taken,
                                 first_delay=settings.reconnect_delay,
                                 max_delay=settings.max_reconnect_delay)

    # --- lifecycle ---------------------------------------------------------------------------
    async def connect(self, *, is_reconnect: bool = False) -> bool:
        s = self.settings
        self.api = ChatAPI(s.api, service="Mattermost", secrets=(s.token,),
                           headers={"Authorization": f"Bearer {s.token}"},
                           auth_hint=f"the server refused the token; check {TOKEN_ENV}")
        try:
            self.me = await self.api.call("GET", "/users/me")
        except ChatAPIError as exc:
            log.error("mattermost: cannot start: %s", exc)
            await self.api.close()
            return False
        self.begin_receiving()
        log.info("mattermost: @%s connected to %s", self.me.get("username", "?"), s.url)
        return True

    async def disconnect(self) -> None:
        await self.receiver.close()
        if self.api is not None:
            await self.api.close()
            self.api = None

    # --- inbound -----------------------------------------------------------------------------
    async def _listen(self) -> None:
        from websockets.asyncio.client import connect
        from websockets.exceptions import InvalidStatus

        headers = {"Authorization": f"Bearer {self.settings.token}"}
        try:
            async with connect(self.settings.websocket_url, additional_headers=headers,
                               logger=_WS_LOG, max_size=8_000_000) as ws:
                async for frame in ws:
                    await self._on_frame(frame)
        except InvalidStatus as exc:
            if exc.response.status_code == 401:
                raise FatalConnectionError(f"the websocket refused the token (HTTP 401); check "
                                           f"{TOKEN_ENV}") from None
            raise
        finally:
            self.connected.clear()

    async def _on_frame(self, frame: Any) -> None:
        try:
            event = json.loads(frame)
        except ValueError:
            return
        if not isinstance(event, dict):
            return
        if event.get("event") == "hello":
            self.connected.set()
            assert self.api is not None
            for data in await missed_posts(self.api, self.cursor):  # before what comes live
                await self._post(data)
        elif event.get("event") == "posted":
            await self._post(event.get("data") or {})

    async def _post(self, data: Mapping[str, Any]) -> None:
        message = self.inbound(data)
        if message is not None:
            self.receiver.put(await self._with_files(message))

    def inbound(self, data: Mapping[str, Any]) -> InboundMessage | None:
        """A ``posted`` event's post, or None for one the agent must not see."""
        try:
            post = json.loads(data["post"]) if isinstance(data.get("post"), str) else data["post"]
        except (KeyError, ValueError):
            return None
        if not isinstance(post, Mapping) or post.get("type") or not post.get("id"):
            return None  # a system message (joins, header changes) has a type
        user, channel = str(post.get("user_id") or ""), str(post.get("channel_id") or "")
        if not user or user == self.me.get("id") or not self._seen.first_time(str(post["id"])):
            return None
        kind = str(data.get("channel_type") or "O")
        s = self.settings
        if kind in ("O", "P") and s.allowed_channels and channel not in s.allowed_channels:
            return None
        text = str(post.get("message") or "")
        mention = re.compile(rf"(?<![\w@])@{re.escape(str(self.me.get('username', '')))}\b",
                             re.I)
        mentioned = bool(self.me.get("username")) and bool(mention.search(text))
        if (kind in ("O", "P") and s.require_mention and channel not in s.free_channels
                and not mentioned):
            return None
        text = mention.sub("", text).strip() if mentioned else text
        files = post.get("file_ids") or []
        if not text and not files:
            return None
        root = str(post.get("root_id") or "") or None
        return InboundMessage(
            PLATFORM, channel, user, text, user_name=str(data.get("sender_name") or "").lstrip("@"),
            thread_id=root, message_id=str(post["id"]),
            chat_type="thread" if root else CHAT_TYPES.get(kind, "group"),
            raw={"post": dict(post), "channel_type": kind})

    async def _with_files(self, message: InboundMessage) -> InboundMessage:
        post = message.raw["post"]
        infos = {str(f.get("id")): f for f in (post.get("metadata") or {}).get("files") or []
                 if isinstance(f, Mapping)}
        pending: list[Pending] = []
        for file_id in post.get("file_ids") or []:
            info = infos.get(str(file_id)) or {}
            pending.append((str(info.get("name") or file_id), str(info.get("mime_type") or ""),
                            self._fetcher(str(file_id))))
        if pending and self.may_talk(message.user_id, message.user_name):  # not a stranger's
            got = await fetch_attachments(pending, self.media)
            message.images, message.attachments = got.images, got.files
            message.text = with_notes(message.text, got.notes)
        return message

    def _fetcher(self, file_id: str) -> Any:
        async def fetch() -> tuple[bytes, str]:
            assert self.api is not None
            return await self.api.download(f"/files/{file_id}",
                                           self.settings.max_attachment_bytes)
        return fetch

    async def _taken(self, message: InboundMessage, outcome: str, _cursor: Any) -> None:
        post = message.raw["post"]
        self.cursor.advance(message.chat_id, message.raw["channel_type"],
                            int(post.get("create_at") or 0))
        if outcome == "queued" and self.api is not None:
            await self.api.call("POST", "/channels/members/me/view",
                                json={"channel_id": message.chat_id})

    # --- outbound ----------------------------------------------------------------------------
    async def send(self, chat_id: str, content: str, reply_to: str | None = None,
                   metadata: dict[str, Any] | None = None) -> SendResult:
        if self.api is None:
            return SendResult(False, error="mattermost is not connected")
        root = (metadata or {}).get("thread_id") or ""
        return await self.api.send("POST", "/posts", _post_id, json={
            "channel_id": chat_id, "message": content, "root_id": root})

    async def edit_message(self, chat_id: str, message_id: str, content: str,
                           metadata: dict[str, Any] | None = None) -> SendResult:
        if self.api is None:
            return SendResult(False, error="mattermost is not connected")
        return await self.api.send("PUT", f"/posts/{message_id}/patch", _post_id,
                                   json={"message": content})

    async def send_typing(self, chat_id: str, metadata: dict[str, Any] | None = None) -> None:
        if self.api is None or not self.me.get("id"):
            return
        try:
            await self.api.call("POST", f"/users/{self.me['id']}/typing", json={
                "channel_id": chat_id, "parent_id": (metadata or {}).get("thread_id") or ""})
        except ChatAPIError as exc:
            log.debug("mattermost: typing failed: %s", exc)

    async def get_chat_info(self, chat_id: str) -> ChatInfo:
        if self.api is None:
            return ChatInfo(name=str(chat_id))
        try:
            channel = await self.api.call("GET", f"/channels/{chat_id}")
        except ChatAPIError as exc:
            return ChatInfo(name=str(chat_id), extra={"error": str(exc)})
        return ChatInfo(name=str(channel.get("display_name") or channel.get("name") or chat_id),
                        type=CHAT_TYPES.get(str(channel.get("type")), "group"),
                        extra={k: channel[k] for k in ("team_id", "name") if channel.get(k)})


def _post_id(answer: Any) -> Any:
    return answer.get("id") if isinstance(answer, dict) else None

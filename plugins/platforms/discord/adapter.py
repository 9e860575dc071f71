"""The Discord adapter: the gateway client receives, the REST client sends. Each
``MESSAGE_CREATE`` from a person (not this bot, not another bot or a webhook; in an allowed guild when
``allowed_guilds`` is set) becomes an ``InboundMessage``: ``chat_id`` the channel, or for a
thread the thread's parent channel with ``thread_id`` the thread; ``chat_type`` ``dm`` without
a guild, else ``group`` (``thread`` in a thread). A voice message is downloaded from the CDN
and transcribed (``stt.provider``); files the turn made go out as attachments."""

from __future__ import annotations

import asyncio
import collections
import logging
from collections.abc import Mapping
from typing import Any

import httpx2

from hermes_agent.api import ChatInfo, InboundMessage, PlatformAdapter, SendResult

from .formatting import format_message
from .gateway import FatalGatewayError, GatewayClient
from .media import image_parts, is_image
from .rest import VOICE_MESSAGE_FLAG, DiscordAuthError, DiscordREST
from .settings import Settings

log = logging.getLogger("hermes_agent.gateway.discord")
PLATFORM = "discord"
THREAD_TYPES = (10, 11, 12)  # announcement, public and private threads
DM_TYPES = (1, 3)
SEEN = 1000  # message ids remembered, so a replayed event is handled once
USER_TYPES = (0, 19)  # a message, a reply; the rest are system messages (pins, joins, ...)
MAX_AUDIO = 25 * 1024 * 1024


class DiscordAdapter(PlatformAdapter):
    name = PLATFORM
    max_message_length = 2000
    supports_streaming = True  # a reply is one message edited as the model writes it

    def __init__(self, config: Any, settings: Settings, transcriber: Any = None):
        super().__init__(config)
        self.settings = settings
        self.transcriber = transcriber  # voice messages become text through it (kits.media)
        self.rest: DiscordREST | None = None
        self.gateway: GatewayClient | None = None
        self.threads: dict[str, str] = {}  # thread channel id -> its parent channel id
        self._task: asyncio.Task[None] | None = None
        self._inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._consumer: asyncio.Task[None] | None = None
        self._seen: collections.OrderedDict[str, None] = collections.OrderedDict()

    # --- lifecycle ---------------------------------------------------------------------------
    async def connect(self, *, is_reconnect: bool = False) -> bool:
        self.rest = DiscordREST(self.settings)
        self.gateway = GatewayClient(self.settings, self._gateway_url, self._on_dispatch)
        self._consumer = asyncio.create_task(self._consume())
        self._task = asyncio.create_task(self.gateway.run())
        self._task.add_done_callback(self._gateway_stopped)
        ready = asyncio.create_task(self.gateway.ready.wait())
        done, _ = await asyncio.wait({ready, self._task}, timeout=self.settings.connect_timeout,
                                     return_when=asyncio.FIRST_COMPLETED)
        if ready in done:
            return True
        ready.cancel()
        if self.gateway.fatal is None:
            log.error("discord: no READY from the gateway within %.0fs; check the network and "
                      "platforms.discord.gateway_url", self.settings.connect_timeout)
        await self.disconnect()
        return False

    async def disconnect(self) -> None:
        if self.gateway is not None:
            await self.gateway.close()
        for task in (self._task, self._consumer):
            if task is not None and not task.done():
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
        if self.rest is not None:
            await self.rest.close()
            self.rest = None

    def _gateway_stopped(self, _task: asyncio.Task[None]) -> None:
        if self.fatal is not None and self.gateway is not None and self.gateway.ready_once:
            self.report_fatal(self.fatal)  # it had connected: the gateway drops it now

    @property
    def fatal(self) -> str | None:
        """Why the gateway stopped for good (a refused token, a missing intent), if it did."""
        return self.gateway.fatal if self.gateway is not None else None

    async def _gateway_url(self) -> str:
        if self.settings.gateway_url:
            return self.settings.gateway_url
        assert self.rest is not None
        try:
            return await self.rest.gateway_url()
        except DiscordAuthError as exc:
            raise FatalGatewayError(str(exc)) from None
        except httpx2.HTTPError as exc:
            raise ConnectionError(f"GET /gateway/bot failed: {type(exc).__name__}") from None

    # --- inbound -----------------------------------------------------------------------------
    def _on_dispatch(self, name: str, data: dict[str, Any]) -> None:
        if name == "MESSAGE_CREATE":
            self._inbox.put_nowait(data)
        elif name in ("THREAD_CREATE", "THREAD_UPDATE", "CHANNEL_CREATE"):
            self._remember_thread(data)
        elif name == "GUILD_CREATE":
            for thread in data.get("threads") or []:
                self._remember_thread(thread)
        elif name == "THREAD_DELETE":
            self.threads.pop(str(data.get("id")), None)

    def _remember_thread(self, channel: Mapping[str, Any]) -> None:
        if channel.get("type") in THREAD_TYPES and channel.get("parent_id"):
            self.threads[str(channel["id"])] = str(channel["parent_id"])

    async def _consume(self) -> None:
        """Messages in the order they came, without holding up the websocket's reader."""
        while True:
            data = await self._inbox.get()
            try:
                message = self.inbound(data)
                if message is not None:
                    await self.handle_message(message)
            except Exception:  # one bad message must not stop the others
                log.exception("discord: handling message %s failed", data.get("id"))

    def inbound(self, data: Mapping[str, Any]) -> InboundMessage | None:
        """The gateway's message, or None for one the agent must not see."""
        author = data.get("author") or {}
        message_id = str(data.get("id") or "")
        me = self.gateway.user_id if self.gateway is not None else None
        if (author.get("bot") or str(author.get("id")) == me or data.get("webhook_id")
                or data.get("type", 0) not in USER_TYPES):  # a webhook posts under any name
            return None
        guild = str(data["guild_id"]) if data.get("guild_id") else None
        if guild and self.settings.allowed_guilds and guild not in self.settings.allowed_guilds:
            log.debug("discord: ignored a message from guild %s (not in allowed_guilds)", guild)
            return None
        if message_id in self._seen:
            return None
        self._seen[message_id] = None
        if len(self._seen) > SEEN:
            self._seen.popitem(last=False)
        text = _text(data, me)
        if not text:
            log.debug("discord: ignored message %s without text (is the Message Content intent "
                      "on?)", message_id)
            return None
        channel = str(data.get("channel_id"))
        parent = self.threads.get(channel)
        return InboundMessage(
            PLATFORM, parent or channel, str(author.get("id")), text,
            user_name=str(author.get("username") or ""), thread_id=channel if parent else None,
            message_id=message_id or None,
            chat_type="thread" if parent else ("group" if guild else "dm"), raw=dict(data))

    async def fetch_images(self, message: InboundMessage) -> None:
        """An allowed sender's image attachments, downloaded from the CDN (:mod:`.media`);
        a voice message or audio attachment, transcribed into the text (:meth:`_transcribe`)."""
        if isinstance(message.raw, dict):
            message.images = await image_parts(message.raw, self.settings.api_base)
            if _audio(message.raw) is not None:
                await self._transcribe(message, message.raw)

    async def _transcribe(self, message: InboundMessage, data: Mapping[str, Any]) -> None:
        """A voice message's (or audio attachment's) transcript replaces its attachment line;
        a failure is said in the text instead."""
        audio = _audio(data) or {}
        line = f"[attachment: {audio.get('filename', 'file')} {audio.get('url', '')}]"
        caption = "\n".join(t for t in message.text.split("\n") if t != line)
        if self.transcriber is None or self.rest is None:
            message.text = "\n".join(t for t in (
                "[The user sent a voice message; speech to text is not available here]",
                caption) if t)
            return
        try:
            content = await self.rest.download(str(audio.get("url") or ""), MAX_AUDIO)
        except (ValueError, httpx2.HTTPError) as exc:
            log.warning("discord: could not download a voice message: %s", exc)
            message.text = "\n".join(t for t in (
                f"[The user sent a voice message that could not be downloaded: {exc}]",
                caption) if t)
            return
        name = f"discord_{audio.get('id') or message.message_id}_{audio.get('filename', 'a.ogg')}"
        saved = await asyncio.to_thread(self.transcriber.save, name, content)
        label = ("voice message" if int(data.get("flags") or 0) & VOICE_MESSAGE_FLAG
                 else "audio file")
        message.text, message.transcribed = await asyncio.to_thread(
            self.transcriber.text_for, saved, caption, label)

    # --- outbound ----------------------------------------------------------------------------
    async def send_media(self, chat_id: str, path: str, kind: str = "file", caption: str = "",
                         reply_to: str | None = None,
                         metadata: dict[str, Any] | None = None) -> SendResult:
        """A voice reply (Ogg/Opus) as a voice message, falling back to an attachment when
        Discord refuses it; any other file as an attachment (Discord plays Ogg/Opus and MP3
        attachments inline)."""
        if self.rest is None:
            return SendResult(False, error="discord is not connected")
        from pathlib import Path

        from hermes_agent.kits.media import audio_format, ogg_duration

        target = self._target(chat_id, metadata)
        if kind == "voice" and audio_format(Path(path)) == "ogg-opus":
            sent = await self.rest.upload(target, path, reply_to,
                                          voice_seconds=ogg_duration(Path(path)) or 1.0)
            if sent.success or sent.retryable:
                return sent
            log.info("discord: the voice message was refused (%s); sending the file", sent.error)
        return await self.rest.upload(target, path, reply_to)

    def _target(self, chat_id: str, metadata: Mapping[str, Any] | None) -> str:
        return str((metadata or {}).get("thread_id") or chat_id)

    async def send(self, chat_id: str, content: str, reply_to: str | None = None,
                   metadata: dict[str, Any] | None = None) -> SendResult:
        if self.rest is None:
            return SendResult(False, error="discord is not connected")
        return await self.rest.create_message(self._target(chat_id, metadata), content, reply_to)

    async def edit_message(self, chat_id: str, message_id: str, content: str,
                           metadata: dict[str, Any] | None = None) -> SendResult:
        if self.rest is None:
            return SendResult(False, error="discord is not connected")
        return await self.rest.edit_message(self._target(chat_id, metadata), message_id, content)

    async def send_typing(self, chat_id: str, metadata: dict[str, Any] | None = None) -> None:
        """Discord shows "typing" for 10 s, or until the bot sends; the gateway renews it."""
        if self.rest is not None:
            await self.rest.typing(self._target(chat_id, metadata))

    async def get_chat_info(self, chat_id: str) -> ChatInfo:
        channel = await self.rest.channel(chat_id) if self.rest is not None else None
        if not channel:
            return ChatInfo(name=str(chat_id))
        kind = channel.get("type")
        return ChatInfo(
            name=str(channel.get("name") or chat_id),
            type="dm" if kind in DM_TYPES else "thread" if kind in THREAD_TYPES else "group",
            extra={k: channel[k] for k in ("guild_id", "parent_id", "topic") if channel.get(k)})

    def format_message(self, content: str) -> str:
        return format_message(content)


def _audio(data: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The voice message's (flag 8192) or the first audio attachment of a message."""
    for attachment in data.get("attachments") or []:
        if isinstance(attachment, Mapping) and (
                str(attachment.get("content_type") or "").startswith("audio/")
                or int(data.get("flags") or 0) & VOICE_MESSAGE_FLAG):
            return attachment
    return None


def _text(data: Mapping[str, Any], me: str | None) -> str:
    """The message's text without the bot's own mention, its attachments' URLs appended
    (images are named only: they come as image parts, :mod:`.media`)."""
    text = str(data.get("content") or "")
    if me:
        text = text.replace(f"<@{me}>", "").replace(f"<@!{me}>", "")
    lines = [text.strip()] + [f"[image: {a.get('filename', 'image')}]" if is_image(a) else
                              f"[attachment: {a.get('filename', 'file')} {a.get('url', '')}]"
                              for a in data.get("attachments") or [] if isinstance(a, Mapping)]
    return "\n".join(line for line in lines if line)

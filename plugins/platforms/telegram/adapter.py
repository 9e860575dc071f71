"""The Telegram adapter: receives updates by long polling (``getUpdates``) or by webhook,
hands their messages to the gateway, and answers with ``sendMessage`` in Telegram HTML
(plain text when Telegram refuses the markup)."""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from typing import Any

from hermes_agent.api import ChatInfo, InboundMessage, PlatformAdapter, SendResult
from hermes_agent.kits.chat_text import split_message
from hermes_agent.kits.media import Transcriber, audio_format
from hermes_agent.kits.platform_config import http_url

from .bot_api import BotAPI, TelegramError
from .formatting import to_html, visible_length
from .media import image_parts
from .settings import Settings
from .updates import PLATFORM, UPDATE_KINDS, chat_type, inbound, message_of, voice_of

log = logging.getLogger("hermes_agent.gateway.telegram")
LIMIT = 4096
TYPING_EVERY, TYPING_FOR = 4.0, 600.0  # Telegram shows "typing" ~5 s; refresh, within a bound
MAX_BACKOFF = 30.0
MAX_DOWNLOAD = 20 * 1024 * 1024  # what the Bot API lets a bot download
#: send_media's kinds -> (method, field); sendVoice plays OGG/Opus, MP3 and M4A
MEDIA_METHODS = {"image": ("sendPhoto", "photo"), "voice": ("sendVoice", "voice"),
                 "audio": ("sendAudio", "audio"), "file": ("sendDocument", "document")}


class TelegramAdapter(PlatformAdapter):
    name = PLATFORM
    max_message_length = LIMIT
    supports_streaming = True  # edit_message grows a sent message in place

    def __init__(self, config: Any, settings: Settings, transcriber: Transcriber | None = None):
        super().__init__(config)
        self.settings = settings
        self.transcriber = transcriber  # voice notes become text through it
        self.api: BotAPI | None = None
        self.bot: dict[str, Any] = {}
        self.webhook: Any = None  # the AsgiServer in webhook mode
        self._offset: int | None = None  # the next update id to ask for (acks the ones before)
        self._acked: int | None = None  # the offset Telegram last saw
        self._poller: asyncio.Task[None] | None = None
        self._typing: dict[tuple[str, str | None], asyncio.Task[None]] = {}
        self._seen: deque[int] = deque(maxlen=1000)  # update ids handled (webhook retries)
        self._closing = False

    # --- lifecycle ---------------------------------------------------------------------------
    async def connect(self, *, is_reconnect: bool = False) -> bool:
        s = self.settings
        self.api = BotAPI(s.token, s.base_url, secrets=s.secrets,
                          timeout=max(20.0, s.poll_timeout + 15.0))
        try:
            self.bot = await self.api.call("getMe")
            if s.mode == "webhook":
                return await self._start_webhook()
            await self.api.call("deleteWebhook", drop_pending_updates=False)
        except TelegramError as exc:
            log.error("telegram: cannot start: %s", exc)
            await self.api.close()
            return False
        if self.receive_on_connect:
            await self.start_receiving()
        else:
            log.info("telegram: @%s connected; another gateway replica polls for now",
                     self.bot.get("username", "?"))
        return True

    @property  # type: ignore[override]
    def exclusive_receiver(self) -> bool:
        """Long polling allows one poller per bot; a webhook serves any replica."""
        return self.settings.mode != "webhook"

    async def start_receiving(self) -> None:
        if self._poller is None and self.settings.mode != "webhook":
            self._poller = asyncio.get_running_loop().create_task(self._poll())
            log.info("telegram: @%s polling for updates", self.bot.get("username", "?"))

    async def _start_webhook(self) -> bool:
        from hermes_agent.kits.asgi import AsgiServer

        from .webhook import build_app

        s, api = self.settings, self.api
        assert api is not None
        self.webhook = AsgiServer(build_app(s.path, s.webhook_secret, self._on_update),
                                  s.host, s.port, name="telegram", backlog=128,
                                  port_hint="set platforms.telegram.port to a free port",
                                  limits=s.limits)
        if not await self.webhook.start():
            await api.close()
            return False
        try:
            await api.call("setWebhook", url=s.webhook_url, secret_token=s.webhook_secret,
                           allowed_updates=list(UPDATE_KINDS))
        except TelegramError as exc:
            log.error("telegram: setWebhook failed: %s", exc)
            await self.webhook.stop()
            await api.close()
            return False
        self.listen_url = http_url(s.host, self.webhook.port, s.path)
        log.info("telegram: @%s receives updates at %s (listening on %s:%s%s)",
                 self.bot.get("username", "?"), s.webhook_url, s.host, self.webhook.port, s.path)
        return True

    async def disconnect(self) -> None:
        self._closing = True
        for task in self._typing.values():
            task.cancel()
        self._typing.clear()
        if self._poller is not None:
            self._poller.cancel()
            await asyncio.gather(self._poller, return_exceptions=True)
        if self.webhook is not None:
            await self.webhook.stop()
        if self.api is None:
            return
        if self._offset is not None and self._offset != self._acked:
            try:  # confirm what was handled, so a restart does not receive it again
                await self.api.call("getUpdates", offset=self._offset, timeout=0, limit=1,
                                    allowed_updates=list(UPDATE_KINDS))
            except TelegramError as exc:
                log.warning("telegram: could not confirm the last updates: %s", exc)
        await self.api.close()

    # --- inbound -----------------------------------------------------------------------------
    async def _poll(self) -> None:
        assert self.api is not None
        failures = 0
        while not self._closing:
            try:
                offset = self._offset
                updates = await self.api.call(
                    "getUpdates", offset=offset, timeout=self.settings.poll_timeout,
                    allowed_updates=list(UPDATE_KINDS))
                self._acked, failures = offset, 0
            except TelegramError as exc:
                if exc.status == 401:
                    log.error("telegram: polling stopped: %s", exc)
                    return
                failures += 1
                wait = exc.retry_after or min(MAX_BACKOFF, 2.0 ** (failures - 1))
                hint = (" (is another gateway polling with this token? only one may)"
                        if exc.status == 409 else "")
                log.warning("telegram: getUpdates failed (%s)%s; retrying in %.0fs", exc, hint,
                            wait)
                await asyncio.sleep(wait)
                continue
            for update in updates if isinstance(updates, list) else []:
                if not isinstance(update, dict) or not isinstance(update.get("update_id"), int):
                    continue
                if not await self._on_update(update):
                    await asyncio.sleep(1.0)  # not taken: asked for again, after a pause
                    break
                self._offset = update["update_id"] + 1

    async def _on_update(self, update: dict[str, Any]) -> bool:
        """Hand one update's message to the gateway; never raises (a bad update is logged
        and skipped). False when the gateway did not take it (stopping, or its queue could
        not store it): the update stays unconfirmed and comes again."""
        update_id = update.get("update_id")
        if isinstance(update_id, int) and update_id in self._seen:
            return True
        try:
            message = inbound(update, self.settings.allowed_chats)
        except Exception:
            log.exception("telegram: update %s is malformed; skipped", update_id)
            return True
        if message is None:
            log.debug("telegram: ignored update %s", update_id)
            return True
        try:
            outcome = await self.handle_message(message)
        except Exception:
            log.exception("telegram: the gateway could not take update %s; it comes again",
                          update_id)
            return False
        if outcome == "closed":
            return False
        if isinstance(update_id, int):
            self._seen.append(update_id)
        return True

    async def fetch_images(self, message: InboundMessage) -> None:
        """A photo or image file of an allowed sender, downloaded (:mod:`.media`); a voice
        note or audio file, transcribed into the text (:meth:`_transcribe`)."""
        if self.api is not None and isinstance(message.raw, dict):
            message.images = await image_parts(self.api, message.raw)
            if voice_of(message_of(message.raw)) is not None:
                await self._transcribe(message, message.raw)

    async def _transcribe(self, message: Any, update: dict[str, Any]) -> None:
        """A voice note's (or audio file's) text, downloaded and transcribed, becomes the
        message's text (its caption after it); a failure is said in the text instead."""
        note = voice_of(message_of(update)) or {}
        caption = str(message_of(update).get("caption") or "")
        if self.transcriber is None or self.api is None:
            message.text = "\n".join(t for t in (
                "[The user sent a voice message; speech to text is not available here]",
                caption) if t)
            return
        try:
            content = await self.api.download(str(note["file_id"]), MAX_DOWNLOAD)
        except TelegramError as exc:
            log.warning("telegram: could not download a voice note: %s", exc)
            message.text = "\n".join(t for t in (
                f"[The user sent a voice message that could not be downloaded: {exc}]",
                caption) if t)
            return
        suffix = {"audio/mpeg": ".mp3", "audio/mp4": ".m4a", "audio/x-wav": ".wav",
                  "audio/wav": ".wav"}.get(str(note.get("mime_type") or ""), ".ogg")
        name = f"telegram_{note.get('file_unique_id') or message.message_id}{suffix}"
        saved = await asyncio.to_thread(self.transcriber.save, name, content)
        label = "voice message" if "voice" in message_of(update) else "audio file"
        message.text, message.transcribed = await asyncio.to_thread(
            self.transcriber.text_for, saved, caption, label)

    # --- outbound ----------------------------------------------------------------------------
    async def send_media(self, chat_id: str, path: str, kind: str = "file", caption: str = "",
                         reply_to: str | None = None,
                         metadata: dict[str, Any] | None = None) -> SendResult:
        """A photo (sendPhoto), a voice message (sendVoice: Ogg/Opus, MP3 or M4A), audio
        (sendAudio: MP3/M4A) or any other file (sendDocument)."""
        if self.api is None:
            return SendResult(False, error="telegram is not connected")
        from pathlib import Path

        found = audio_format(Path(path))
        if kind == "voice" and found not in ("ogg-opus", "mp3", "m4a"):
            kind = "audio"
        if kind == "audio" and found not in ("mp3", "m4a"):
            kind = "file"  # Telegram's player plays MP3 and M4A only
        method, field = MEDIA_METHODS.get(kind, MEDIA_METHODS["file"])
        thread = (metadata or {}).get("thread_id")
        self._stop_typing(chat_id, thread)
        try:
            sent = await self.api.upload(method, field, path, chat_id=chat_id,
                                         caption=caption[:1024] or None,
                                         message_thread_id=_int(thread),
                                         reply_to_message_id=_int(reply_to))
        except TelegramError as exc:
            return SendResult(False, error=str(exc), retryable=exc.retryable,
                              retry_after=exc.retry_after)
        message_id = sent.get("message_id") if isinstance(sent, dict) else None
        return SendResult(True, message_id=str(message_id) if message_id is not None else None,
                          raw=sent)

    async def send(self, chat_id: str, content: str, reply_to: str | None = None,
                   metadata: dict[str, Any] | None = None) -> SendResult:
        thread = (metadata or {}).get("thread_id")
        self._stop_typing(chat_id, thread)
        pieces = split_message(content, LIMIT, visible_length) or [content]
        result = SendResult(False, error="nothing to send")
        for index, piece in enumerate(pieces):  # more than one only for UTF-16-long text
            result = await self._send_one(chat_id, piece, reply_to if index == 0 else None,
                                          thread)
            if not result.success:
                if index:  # earlier pieces were delivered: a retry would repeat them
                    result.retryable = False
                break
        return result

    async def _send_one(self, chat_id: str, text: str, reply_to: str | None,
                        thread: Any) -> SendResult:
        params: dict[str, Any] = {
            "chat_id": chat_id, "message_thread_id": _int(thread),
            "reply_to_message_id": _int(reply_to),
            "allow_sending_without_reply": True if reply_to else None}
        return await self._deliver("sendMessage", text, params)

    async def edit_message(self, chat_id: str, message_id: str, content: str,
                           metadata: dict[str, Any] | None = None) -> SendResult:
        params = {"chat_id": chat_id, "message_id": _int(message_id)}
        result = await self._deliver("editMessageText", content[:LIMIT], params)
        if not result.success and "message is not modified" in (result.error or ""):
            return SendResult(True, message_id=message_id)
        return result

    async def _deliver(self, method: str, text: str, params: dict[str, Any]) -> SendResult:
        """``text`` as HTML; again as plain text when Telegram cannot parse the HTML."""
        if self.api is None:
            return SendResult(False, error="telegram is not connected")
        try:
            try:
                sent = await self.api.call(method, text=to_html(text), parse_mode="HTML",
                                           **params)
            except TelegramError as exc:
                if not exc.cannot_parse:
                    raise
                log.info("telegram: %s refused the HTML (%s); sending plain text",
                         method, exc.description)
                sent = await self.api.call(method, text=text, **params)
        except TelegramError as exc:
            return SendResult(False, error=str(exc), retryable=exc.retryable,
                              retry_after=exc.retry_after, raw=exc.parameters or None)
        message_id = sent.get("message_id") if isinstance(sent, dict) else None
        return SendResult(True, message_id=str(message_id) if message_id is not None else None,
                          raw=sent)

    async def send_typing(self, chat_id: str, metadata: dict[str, Any] | None = None) -> None:
        """Show "typing…" until the reply is sent (refreshed, for at most ten minutes)."""
        key = (str(chat_id), _thread_key((metadata or {}).get("thread_id")))
        self._stop_typing(*key)
        self._typing[key] = asyncio.get_running_loop().create_task(self._keep_typing(*key))

    async def stop_typing(self, chat_id: str, metadata: dict[str, Any] | None = None) -> None:
        self._stop_typing(chat_id, (metadata or {}).get("thread_id"))

    def _stop_typing(self, chat_id: str, thread: Any) -> None:
        task = self._typing.pop((str(chat_id), _thread_key(thread)), None)
        if task is not None:
            task.cancel()

    async def _keep_typing(self, chat_id: str, thread: str | None) -> None:
        loop = asyncio.get_running_loop()
        until = loop.time() + TYPING_FOR
        while self.api is not None and loop.time() < until:
            try:
                await self.api.call("sendChatAction", chat_id=chat_id, action="typing",
                                    message_thread_id=_int(thread))
            except TelegramError as exc:
                log.debug("telegram: sendChatAction failed: %s", exc)
                return
            await asyncio.sleep(TYPING_EVERY)

    async def get_chat_info(self, chat_id: str) -> ChatInfo:
        if self.api is None:
            return ChatInfo(name=str(chat_id))
        try:
            chat = await self.api.call("getChat", chat_id=chat_id)
        except TelegramError as exc:
            log.warning("telegram: getChat %s failed: %s", chat_id, exc)
            return ChatInfo(name=str(chat_id), extra={"error": str(exc)})
        name = chat.get("title") or " ".join(
            p for p in (chat.get("first_name"), chat.get("last_name")) if p
        ) or chat.get("username") or str(chat_id)
        extra = {k: chat[k] for k in ("id", "username", "is_forum", "type") if k in chat}
        return ChatInfo(name=name, type=chat_type(str(chat.get("type", ""))), extra=extra)

    def format_message(self, content: str) -> str:
        """Markdown stays markdown here: each piece becomes HTML when sent (so the gateway
        splits at markdown's paragraphs and code fences, never inside an HTML tag)."""
        return content


def _int(value: Any) -> int | None:
    try:
        return int(value) if value not in (None, "") else None
    except (TypeError, ValueError):
        return None


def _thread_key(thread: Any) -> str | None:
    return str(thread) if thread not in (None, "") else None

"""The Signal adapter, on signal-cli's HTTP daemon: messages arrive on its event stream,
replies go out with the JSON-RPC ``send`` (quoting the message answered), attachments come
through ``getAttachment``. A direct chat is the sender's number (or ACI): ``signal:+1555...``;
a group is ``signal:group.<group id>`` and is answered only when ``SIGNAL_GROUP_ALLOWED_USERS``
lists it (or is ``*``). Once the gateway has a message in its inbox the sender gets a read
receipt and the event's id is saved, so a restarted gateway asks signal-cli for what came
after it."""

from __future__ import annotations

import base64
import json
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hermes_agent import write_atomic
from hermes_agent.api import InboundMessage, SendResult
from hermes_agent.kits.chat_api import ChatAPIError, ReceivingAdapter, Receiver, RecentIds
from hermes_agent.kits.chat_media import Pending, fetch_attachments, with_notes
from hermes_agent.kits.chat_text import light_markdown

from .daemon import SignalDaemon, envelope
from .settings import Settings

log = logging.getLogger("hermes_agent.gateway.signal")
PLATFORM = "signal"
LIMIT = 8000  # what one Signal message carries here; longer replies are split
GROUP = "group."  # base64 group ids never hold a dot


class SignalAdapter(ReceivingAdapter):
    name = PLATFORM
    max_message_length = LIMIT

    def __init__(self, config: Any, settings: Settings, cursor_path: Path):
        super().__init__(config)
        self.settings = settings
        self.media = cursor_path.parent / "media" / PLATFORM  # files neither images nor text
        self.cursor_path = cursor_path  # the id of the last event taken
        self.daemon: SignalDaemon | None = None
        self._last_event = self._read_cursor()
        self._seen = RecentIds()
        self.receiver = Receiver(self, self._listen, self._taken,
                                 first_delay=settings.reconnect_delay,
                                 max_delay=settings.max_reconnect_delay)

    # --- lifecycle ---------------------------------------------------------------------------
    async def connect(self, *, is_reconnect: bool = False) -> bool:
        s = self.settings
        self.daemon = SignalDaemon(s.http_url, s.account)
        try:
            await self.daemon.api.call("GET", "/api/v1/check")
        except ChatAPIError as exc:
            log.error("signal: cannot reach signal-cli at %s (%s); start it with `signal-cli "
                      "-a %s daemon --http HOST:PORT` and set SIGNAL_HTTP_URL", s.http_url, exc,
                      s.account)
            await self.daemon.close()
            return False
        self.begin_receiving()
        log.info("signal: %s receiving from signal-cli at %s", s.account, s.http_url)
        return True

    async def disconnect(self) -> None:
        await self.receiver.close()
        if self.daemon is not None:
            await self.daemon.close()
            self.daemon = None

    # --- inbound -----------------------------------------------------------------------------
    async def _listen(self) -> None:
        assert self.daemon is not None
        async for event in self.daemon.events(self._last_event):
            found = envelope(event)
            message = self.inbound(*found) if found is not None else None
            if message is not None:
                self.receiver.put(await self._with_attachments(message), event.id)

    def inbound(self, data: Mapping[str, Any], account: str) -> InboundMessage | None:
        """The envelope's message, or None (a receipt, typing, our own, a group not
        answered)."""
        sender = str(data.get("sourceNumber") or data.get("sourceUuid") or data.get("source")
                     or "")
        message = data.get("dataMessage")
        if not sender or not isinstance(message, Mapping) or sender == self.settings.account:
            return None
        if account and account != self.settings.account:
            return None
        stamp = str(message.get("timestamp") or data.get("timestamp") or "")
        if not stamp or not self._seen.first_time(f"{sender}/{stamp}"):
            return None
        text = str(message.get("message") or "")
        attachments = [a for a in message.get("attachments") or [] if isinstance(a, Mapping)]
        if not text and not attachments:
            return None
        group = (message.get("groupInfo") or {}).get("groupId")
        if group and not self.settings.answers_group(str(group)):
            log.debug("signal: ignored a message in group %s (not in SIGNAL_GROUP_ALLOWED_USERS)",
                      group)
            return None
        return InboundMessage(PLATFORM, f"{GROUP}{group}" if group else sender, sender, text,
                              user_name=str(data.get("sourceName") or ""),
                              message_id=f"{stamp}:{sender}",
                              chat_type="group" if group else "dm",
                              raw={"envelope": dict(data), "attachments": attachments})

    async def _with_attachments(self, message: InboundMessage) -> InboundMessage:
        pending: list[Pending] = []
        for item in message.raw["attachments"]:
            name = str(item.get("filename") or item.get("id") or "attachment")
            pending.append((name, str(item.get("contentType") or ""),
                            self._fetcher(message.chat_id, str(item.get("id") or ""),
                                          int(item.get("size") or 0))))
        if pending and self.may_talk(message.user_id, message.user_name):  # not a stranger's
            got = await fetch_attachments(pending, self.media)
            message.images, message.attachments = got.images, got.files
            message.text = with_notes(message.text, got.notes)
        return message

    def _fetcher(self, chat_id: str, attachment_id: str, size: int) -> Any:
        async def fetch() -> tuple[bytes, str]:
            limit = self.settings.max_attachment_bytes
            if size > limit:
                raise ValueError(f"{size} bytes, over the {limit}-byte limit")
            assert self.daemon is not None
            result = await self.daemon.call("getAttachment", id=attachment_id,
                                            **self._target(chat_id))
            encoded = result.get("data") if isinstance(result, dict) else result
            data = base64.b64decode(str(encoded or ""))
            if len(data) > limit:
                raise ValueError(f"over the {limit}-byte limit")
            return data, ""
        return fetch

    async def _taken(self, message: InboundMessage, outcome: str, event_id: Any) -> None:
        if event_id:
            self._save_cursor(str(event_id))
        if outcome == "queued" and self.daemon is not None:
            stamp, _, sender = (message.message_id or "").partition(":")
            await self.daemon.call("sendReceipt", recipient=sender, targetTimestamp=[int(stamp)],
                                   type="read")

    def _read_cursor(self) -> str | None:
        try:
            return str(json.loads(self.cursor_path.read_text())["last_event_id"]) or None
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def _save_cursor(self, event_id: str) -> None:
        self._last_event = event_id
        try:
            write_atomic(self.cursor_path, json.dumps({"last_event_id": event_id}), 0o600)
        except OSError as exc:
            log.warning("signal: cannot save the event position to %s: %s", self.cursor_path,
                        exc)

    # --- outbound ----------------------------------------------------------------------------
    def _target(self, chat_id: str) -> dict[str, Any]:
        if chat_id.startswith(GROUP):
            return {"groupId": chat_id[len(GROUP):]}
        return {"recipient": [chat_id]}

    async def send(self, chat_id: str, content: str, reply_to: str | None = None,
                   metadata: dict[str, Any] | None = None) -> SendResult:
        if self.daemon is None:
            return SendResult(False, error="signal is not connected")
        quote: dict[str, Any] = {}
        stamp, _, author = (reply_to or "").partition(":")
        if stamp.isdigit() and author:
            quote = {"quoteTimestamp": int(stamp), "quoteAuthor": author}
        try:
            result = await self.daemon.call("send", message=content, **self._target(chat_id),
                                            **quote)
        except ChatAPIError as exc:
            return exc.result()
        sent = result.get("timestamp") if isinstance(result, dict) else None
        return SendResult(True, message_id=f"{sent}:{self.settings.account}" if sent else None,
                          raw=result)

    async def send_typing(self, chat_id: str, metadata: dict[str, Any] | None = None) -> None:
        await self._typing(chat_id, stop=False)

    async def stop_typing(self, chat_id: str, metadata: dict[str, Any] | None = None) -> None:
        await self._typing(chat_id, stop=True)

    async def _typing(self, chat_id: str, stop: bool) -> None:
        if self.daemon is None:
            return
        try:
            await self.daemon.call("sendTyping", stop=stop or None, **self._target(chat_id))
        except ChatAPIError as exc:
            log.debug("signal: sendTyping failed: %s", exc)

    def format_message(self, content: str) -> str:
        return light_markdown(content, bold="", strike="")

"""The WhatsApp Cloud API adapter: Meta POSTs each message to the webhook (served by uvicorn
on the gateway's loop, signature checked); media is fetched through the Graph API's media
endpoints (``GET /{media-id}`` for its URL, then the file, both with the access token);
replies go out with ``POST /{phone-number-id}/messages``, marked as answers to the message
they reply to. Each sender (``wa_id``) is one chat: ``whatsapp_cloud:<wa_id>``."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from hermes_agent.api import InboundMessage, PlatformAdapter, SendResult
from hermes_agent.kits.chat_api import ChatAPI, RecentIds
from hermes_agent.kits.chat_media import Pending, fetch_attachments, with_notes
from hermes_agent.kits.chat_text import light_markdown
from hermes_agent.kits.platform_config import http_url

from .messages import Received, received
from .settings import Settings

log = logging.getLogger("hermes_agent.gateway.whatsapp_cloud")
PLATFORM = "whatsapp_cloud"
LIMIT = 4096  # the Cloud API's limit on a text message's body
#: outcomes after which Meta must not deliver the message again
TAKEN = ("queued", "answered", "skipped", "refused")


class WhatsAppCloudAdapter(PlatformAdapter):
    name = PLATFORM
    max_message_length = LIMIT

    def __init__(self, config: Any, settings: Settings, media: Path):
        super().__init__(config)
        self.settings = settings
        self.media = media  # where attachments that are neither images nor text are saved
        self.api: ChatAPI | None = None
        self.server: Any = None
        self._taken = RecentIds()  # Meta delivers again after a 503 or a slow answer

    async def connect(self, *, is_reconnect: bool = False) -> bool:
        from hermes_agent.kits.asgi import AsgiServer

        from .webhook import build_app

        s = self.settings
        self.api = ChatAPI(s.api_base, service="the WhatsApp Cloud API",
                           headers={"Authorization": f"Bearer {s.access_token}"},
                           secrets=s.secrets,
                           auth_hint="check WHATSAPP_CLOUD_ACCESS_TOKEN; a temporary token "
                                     "lasts 24 hours")
        self.server = AsgiServer(build_app(s.path, s.verify_token, s.app_secret, self._receive),
                                 s.host, s.port, name=PLATFORM, limits=s.limits,
                                 port_hint="set WHATSAPP_CLOUD_WEBHOOK_PORT to a free port")
        if not await self.server.start():
            await self.api.close()
            return False
        self.listen_url = http_url(s.host, self.server.port, s.path)
        log.info("whatsapp_cloud: webhook on %s; give Meta its public HTTPS URL", self.listen_url)
        return True

    async def disconnect(self) -> None:
        if self.server is not None:
            await self.server.stop()
        if self.api is not None:
            await self.api.close()
            self.api = None

    # --- inbound -----------------------------------------------------------------------------
    async def _receive(self, notification: dict[str, Any]) -> bool:
        """Every message of a notification to the gateway, in order; False when one was not
        taken (Meta sends the notification again; the ones taken are not handed on twice)."""
        s = self.settings
        for item in received(notification, s.phone_number_id, s.waba_id):
            if item.message_id in self._taken:
                continue
            try:
                outcome = await self.accept_message(await self._inbound(item))
            except Exception:
                log.exception("whatsapp_cloud: the gateway could not take %s", item.message_id)
                return False
            if outcome not in TAKEN:
                return False
            self._taken.first_time(item.message_id)
            if outcome == "queued":
                await self._mark_read(item.message_id)
        return True

    async def _inbound(self, item: Received) -> InboundMessage:
        pending = self._pending(item) if self.may_talk(item.sender, item.name) else []
        got = await fetch_attachments(pending, self.media)  # a stranger's media: not fetched
        return InboundMessage(PLATFORM, item.sender, item.sender,
                              with_notes(item.text, got.notes), user_name=item.name,
                              message_id=item.message_id, chat_type="dm", raw=item.raw,
                              images=got.images, attachments=got.files)

    def _pending(self, item: Received) -> list[Pending]:
        def fetcher(media_id: str) -> Any:
            async def fetch() -> tuple[bytes, str]:
                assert self.api is not None
                info = await self.api.call("GET", f"/{media_id}")
                url = str(info.get("url") or "") if isinstance(info, dict) else ""
                if not url:
                    raise ValueError("the Graph API gave no URL for it")
                data, served = await self.api.download(url, self.settings.max_attachment_bytes)
                return data, str(info.get("mime_type") or served)
            return fetch

        return [(m["filename"], m["mime_type"], fetcher(m["id"])) for m in item.media]

    async def _mark_read(self, message_id: str) -> None:
        """The sender sees the blue ticks once the message is safe in the inbox."""
        if self.api is None:
            return
        result = await self.api.send("POST", f"/{self.settings.phone_number_id}/messages",
                                     lambda _: None, json={"messaging_product": "whatsapp",
                                                           "status": "read",
                                                           "message_id": message_id})
        if not result.success:
            log.debug("whatsapp_cloud: marking %s read failed: %s", message_id, result.error)

    # --- outbound ----------------------------------------------------------------------------
    async def send(self, chat_id: str, content: str, reply_to: str | None = None,
                   metadata: dict[str, Any] | None = None) -> SendResult:
        if self.api is None:
            return SendResult(False, error="whatsapp_cloud is not connected")
        body: dict[str, Any] = {"messaging_product": "whatsapp", "recipient_type": "individual",
                                "to": chat_id, "type": "text",
                                "text": {"body": content, "preview_url": False}}
        if reply_to:
            body["context"] = {"message_id": reply_to}
        return await self.api.send("POST", f"/{self.settings.phone_number_id}/messages",
                                   _sent_id, json=body)

    def format_message(self, content: str) -> str:
        return light_markdown(content)


def _sent_id(answer: Any) -> Any:
    messages = answer.get("messages") if isinstance(answer, dict) else None
    return messages[0].get("id") if messages and isinstance(messages[0], dict) else None

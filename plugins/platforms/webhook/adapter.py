"""The webhook's adapter: serves the Starlette app with uvicorn as a task on the gateway's
loop, hands each accepted message to the gateway, and POSTs each reply, signed, to
``reply_url`` with httpx. A reply the receiver certainly did not take (a 429 or 5xx, or no
connection) is reported ``retryable``; the gateway's retry reuses its delivery id, so a
receiver that did process it after all can drop the copy."""

from __future__ import annotations

import asyncio
import json
import logging
import time
import uuid
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from hermes_agent.api import InboundMessage, PlatformAdapter, SendResult
from hermes_agent.kits.http import retry_after_seconds
from hermes_agent.kits.platform_config import http_url

from .settings import Settings
from .signing import DELIVERY_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER, sign

log = logging.getLogger("hermes_agent.gateway.webhook")
PLATFORM = "webhook"
USER_AGENT = "hermes-webhook/0.1"
RETRIES_REMEMBERED = 256


class WebhookAdapter(PlatformAdapter):
    name = PLATFORM

    def __init__(self, config: Any, settings: Settings):
        super().__init__(config)
        self.settings = settings
        self.port = settings.port  # the bound port once connected (port 0 picks a free one)
        self._server: Any = None
        self._http: Any = None
        # a reply that failed retryably -> its delivery id, reused when the gateway retries it
        self._retrying: OrderedDict[tuple[Any, ...], str] = OrderedDict()

    # --- lifecycle ---------------------------------------------------------------------------
    async def connect(self, *, is_reconnect: bool = False) -> bool:
        import httpx2

        from hermes_agent.kits.asgi import AsgiServer

        from .app import build_app

        if not self.settings.secret:
            log.error("webhook: refusing to start without a secret; set WEBHOOK_SECRET")
            return False
        self._server = AsgiServer(build_app(self.settings, self._receive), self.settings.host,
                                  self.settings.port, name="webhook",
                                  port_hint="set platforms.webhook.port or WEBHOOK_PORT to a "
                                            "free port", limits=self.settings.limits)
        if not await self._server.start():
            return False
        self.port = self._server.port
        self.listen_url = http_url(self.settings.host, self.port, self.settings.path)
        self._http = httpx2.AsyncClient(
            follow_redirects=False, trust_env=False,
            timeout=httpx2.Timeout(self.settings.reply_timeout, connect=5.0))
        log.info("webhook: listening on http://%s:%s%s; replies go to %s", self.settings.host,
                 self.port, self.settings.path, self.settings.reply_target)
        if not self.settings.require_timestamp:
            log.warning("webhook: requests without X-Hermes-Timestamp are accepted, and such a "
                        "signed request, once captured, can be replayed at will; set "
                        "platforms.webhook.require_timestamp: true once the sender timestamps")
        return True

    async def disconnect(self) -> None:
        if self._server is not None:
            await self._server.stop()
        accepting = getattr(self, "_accepting", set())
        if accepting:  # replies to messages just taken (a refusal, a command's answer)
            await asyncio.wait(set(accepting), timeout=10)
        if self._http is not None:
            await self._http.aclose()
            self._http = None

    # --- inbound -----------------------------------------------------------------------------
    async def _receive(self, message: InboundMessage) -> str:
        """What the gateway made of ``message``; ``queued`` once it is in the durable inbox.
        The sender's request does not wait for a refusal or a command's answer, which are
        POSTed to reply_url (which may be slow, or the sender itself)."""
        try:
            return await self.accept_message(message)
        except Exception:
            log.exception("webhook: the gateway failed to take message %s", message.message_id)
            return "closed"

    # --- outbound ----------------------------------------------------------------------------
    async def send(self, chat_id: str, content: str, reply_to: str | None = None,
                   metadata: Mapping[str, Any] | None = None) -> SendResult:  # type: ignore[override]
        import httpx2

        if self._http is None:
            return SendResult(False, error="the webhook is not connected")
        thread_id = (metadata or {}).get("thread_id")
        key = (chat_id, thread_id, reply_to, content)
        delivery = self._retrying.pop(key, None) or uuid.uuid4().hex
        body = json.dumps({"chat_id": chat_id, "thread_id": thread_id, "reply_to": reply_to,
                           "text": content, "message_id": delivery}).encode()
        timestamp = str(int(time.time()))
        headers = {"Content-Type": "application/json", "User-Agent": USER_AGENT,
                   SIGNATURE_HEADER: sign(self.settings.secret, body, timestamp),
                   TIMESTAMP_HEADER: timestamp, DELIVERY_HEADER: delivery}
        target = self.settings.reply_target
        try:
            response = await self._http.post(self.settings.reply_url, content=body,
                                             headers=headers)
        except httpx2.HTTPError as exc:
            self._remember(key, delivery)
            return SendResult(False, error=f"could not POST the reply to {target}: "
                              f"{type(exc).__name__}", retryable=True)
        if response.is_success:
            return SendResult(True, message_id=delivery)
        status = response.status_code
        retryable = status == 429 or status >= 500
        if retryable:
            self._remember(key, delivery)
        return SendResult(False, error=f"{target} answered {status}", retryable=retryable,
                          retry_after=retry_after_seconds(response.headers.get("retry-after")),
                          raw={"status": status})

    def _remember(self, key: tuple[Any, ...], delivery: str) -> None:
        self._retrying[key] = delivery
        while len(self._retrying) > RETRIES_REMEMBERED:
            self._retrying.popitem(last=False)

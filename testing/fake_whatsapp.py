"""A fake WhatsApp Cloud API on 127.0.0.1 for tests: the Graph API the bot calls and Meta's
side of the webhook.

    with FakeWhatsApp() as wa:
        # platforms.whatsapp_cloud: {graph_url: wa.base_url, port: ...}
        # WHATSAPP_CLOUD_ACCESS_TOKEN=wa.token, _APP_SECRET=wa.app_secret, _VERIFY_TOKEN=...,
        # _PHONE_NUMBER_ID=wa.phone_number_id
        status = wa.deliver(webhook_url, wa.notification("15550001111", "hi", name="Alice"))
        [reply] = wa.wait_sent(1, "15550001111")

Graph API: ``POST /{version}/{phone-number-id}/messages`` (a text message: ``to``,
``text.body`` of at most 4096 characters, else a 400 with code 100; or ``status: read``, a
read receipt), ``GET /{version}/{media-id}`` (the media's URL, type and size) and that URL
(the bytes). A missing or wrong bearer token gets a 401 ``OAuthException`` (code 190), as
Meta answers; errors are ``{"error": {"message", "type", "code", "fbtrace_id"}}``.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
import urllib.error
import urllib.request
from typing import Any

from .fake_chat import ChatHandler, ChatState, FakeChat, Sent
from .local_server import RecordedRequest, send_json

LIMIT = 4096


def graph_error(message: str, code: int, kind: str = "OAuthException") -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "code": code,
                      "fbtrace_id": "AFakeTrace"}}


class _Handler(ChatHandler):
    def serve(self, state: ChatState, request: RecordedRequest) -> None:
        if request.headers.get("authorization") != f"Bearer {state.token}":
            send_json(self, 401, graph_error("Invalid OAuth access token - Cannot parse access "
                                             "token", 190))
            return
        parts = request.path.strip("/").split("/")
        if request.method == "GET" and len(parts) == 2:
            self._media(state, parts[1], raw=parts[0] == "media")
        elif request.method == "POST" and len(parts) == 3 and parts[2] == "messages":
            self._message(state, request.body or {})
        else:
            send_json(self, 400, graph_error("Unsupported request", 100, "GraphMethodException"))

    def _media(self, state: ChatState, media_id: str, raw: bool) -> None:
        """``GET /{version}/{media-id}``: where the file is; ``GET /media/{id}``: the file."""
        found = self.file(state, media_id)
        if found is None:
            send_json(self, 404, graph_error("Object does not exist", 100, "GraphMethodException"))
            return
        data, media_type, _ = found
        if raw:
            self.send_bytes(data, media_type)
            return
        host, port = self.server.server_address[:2]
        send_json(self, 200, {"messaging_product": "whatsapp", "id": media_id,
                              "url": f"http://{host}:{port}/media/{media_id}",
                              "mime_type": media_type, "file_size": len(data),
                              "sha256": hashlib.sha256(data).hexdigest()})

    def _message(self, state: ChatState, body: dict[str, Any]) -> None:
        if body.get("status") == "read":
            state.add_receipt(body.get("message_id"))
            send_json(self, 200, {"success": True})
            return
        failure = state.take_failure("messages")
        if failure is not None:
            status, wait = failure
            send_json(self, status, graph_error("(#130429) Rate limit hit", 130429, "OAuthException"),
                      {"Retry-After": str(wait)} if wait is not None else None)
            return
        text = str((body.get("text") or {}).get("body") or "")
        if body.get("type") != "text" or not text or not body.get("to"):
            send_json(self, 400, graph_error("(#100) Invalid parameter", 100))
            return
        if len(text) > LIMIT:
            send_json(self, 400, graph_error(f"(#100) Param text['body'] must be at most {LIMIT} "
                                             "characters long.", 100))
            return
        message_id = f"wamid.OUT{next(state.ids)}"
        state.add_sent(Sent(str(body["to"]), text, message_id,
                            reply_to=(body.get("context") or {}).get("message_id")))
        send_json(self, 200, {"messaging_product": "whatsapp",
                              "contacts": [{"input": body["to"], "wa_id": body["to"]}],
                              "messages": [{"id": message_id}]})


class FakeWhatsApp(FakeChat):
    thread_name = "fake-whatsapp"
    handler = _Handler

    def __init__(self, token: str = "EAAFakeWhatsAppAccessToken0123456789",
                 app_secret: str = "0123456789abcdef0123456789abcdef",
                 phone_number_id: str = "106540352242922", waba_id: str = "102290129340398"):
        self._state = ChatState(token)
        self.app_secret, self.phone_number_id, self.waba_id = app_secret, phone_number_id, waba_id

    def notification(self, wa_id: str, text: str = "", *, name: str = "",
                     media: tuple[str, str] | None = None, phone_number_id: str | None = None,
                     message_id: str | None = None) -> dict[str, Any]:
        """The webhook body Meta posts for one user message; ``media``: ``(kind, file id)``
        (an ``image`` or ``document`` the user attached, ``text`` its caption)."""
        with self._state.lock:
            message_id = message_id or f"wamid.IN{next(self._state.ids)}"
        message: dict[str, Any] = {"from": wa_id, "id": message_id,
                                   "timestamp": str(int(time.time()))}
        if media is None:
            message.update(type="text", text={"body": text})
        else:
            kind, file_id = media
            data, media_type, file_name = self._state.files[file_id]
            body: dict[str, Any] = {"id": file_id, "mime_type": media_type,
                                    "sha256": hashlib.sha256(data).hexdigest()}
            if text:
                body["caption"] = text
            if kind == "document":
                body["filename"] = file_name
            message.update(type=kind, **{kind: body})
        return {"object": "whatsapp_business_account", "entry": [{
            "id": self.waba_id, "changes": [{"field": "messages", "value": {
                "messaging_product": "whatsapp",
                "metadata": {"display_phone_number": "15550009999",
                             "phone_number_id": phone_number_id or self.phone_number_id},
                "contacts": [{"profile": {"name": name or wa_id}, "wa_id": wa_id}],
                "messages": [message]}}]}]}

    def signature(self, body: bytes) -> str:
        return "sha256=" + hmac.new(self.app_secret.encode(), body, hashlib.sha256).hexdigest()

    def deliver(self, url: str, notification: dict[str, Any], *, signature: str | None = "",
                timeout: float = 30.0) -> int:
        """POST ``notification`` to the webhook as Meta does, signed with the app secret (or
        with ``signature``, None for no header); the HTTP status the bot answered."""
        body = json.dumps(notification).encode()
        headers = {"Content-Type": "application/json"}
        signed = self.signature(body) if signature == "" else signature
        if signed is not None:
            headers["X-Hub-Signature-256"] = signed
        return _status(urllib.request.Request(url, body, headers, method="POST"), timeout)[0]

    def verify(self, url: str, verify_token: str, challenge: str = "1158201444"
               ) -> tuple[int, str]:
        """Meta's GET handshake; the status and the body answered."""
        query = (f"?hub.mode=subscribe&hub.verify_token={verify_token}"
                 f"&hub.challenge={challenge}")
        return _status(urllib.request.Request(url + query, method="GET"), 30.0)


def _status(request: urllib.request.Request, timeout: float) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return int(response.status), response.read().decode()
    except urllib.error.HTTPError as exc:
        return int(exc.code), exc.read().decode()

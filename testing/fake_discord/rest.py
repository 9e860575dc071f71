"""The fake's REST API (``/api/v10``): ``GET /gateway/bot``, ``POST /channels/{id}/messages``,
``PATCH /channels/{id}/messages/{mid}``, ``POST /channels/{id}/typing``, ``GET
/channels/{id}``; and, as Discord's CDN, ``GET /attachments/{id}/{filename}`` (the files
users attached, no token needed). A missing or wrong ``Authorization: Bot <token>`` gets Discord's 401; a
scripted rate limit gets its 429 (``retry_after`` in the body and the ``Retry-After``
header), a scripted failure its status. Every request is recorded (``Authorization`` masked)."""

from __future__ import annotations

import re
import threading
from http.server import BaseHTTPRequestHandler
from typing import Any

import json

from ..local_server import multipart, read_request, send_json
from .host import DiscordHost

PREFIX = "/api/v10"
MESSAGES = re.compile(r"^/channels/(\d+)/messages$")
MESSAGE = re.compile(r"^/channels/(\d+)/messages/(\d+)$")
TYPING = re.compile(r"^/channels/(\d+)/typing$")
CHANNEL = re.compile(r"^/channels/(\d+)$")
ERRORS = {403: "Missing Permissions", 500: "Internal Server Error", 502: "Bad Gateway"}


class RestHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def handle(self) -> None:
        threading.current_thread().name = "fake-discord-rest"
        super().handle()

    @property
    def fake(self) -> DiscordHost:
        return self.server.state  # type: ignore[attr-defined, no-any-return]

    def do_GET(self) -> None:  # noqa: N802
        self._serve()

    def do_POST(self) -> None:  # noqa: N802
        self._serve()

    def do_PATCH(self) -> None:  # noqa: N802
        self._serve()

    def _serve(self) -> None:
        request = read_request(self)
        fake = self.fake
        if request.path.startswith("/attachments/"):  # the CDN: no Authorization
            fake._record("requests", request)
            fake._record("downloads", request)
            body = fake.files.get(request.path)
            self.send_response(200 if body is not None else 404)
            self.send_header("content-length", str(len(body or b"")))
            self.end_headers()
            self.wfile.write(body or b"")
            return
        authorized = request.headers.get("authorization") == f"Bot {fake.token}"
        request.headers["authorization"] = "Bot ***" if authorized else "(wrong)"
        fake._record("requests", request)
        if not authorized:
            send_json(self, 401, {"message": "401: Unauthorized", "code": 0})
            return
        path = request.path.removeprefix(PREFIX)
        method = request.method
        if method == "GET" and path == "/gateway/bot":
            send_json(self, 200, {"url": fake.gateway_url, "shards": 1, "session_start_limit": {
                "total": 1000, "remaining": 999, "reset_after": 0, "max_concurrency": 1}})
        elif method == "POST" and (match := MESSAGES.match(path)):
            failure = fake._take_failure()
            if failure is not None and failure[0] == 429:
                send_json(self, 429, {"message": "You are being rate limited.",
                                      "retry_after": failure[1], "global": False},
                          {"Retry-After": str(failure[1]), "X-RateLimit-Scope": "user"})
                return
            if failure is not None:
                send_json(self, failure[0], {"message": ERRORS.get(failure[0], "Error"),
                                             "code": 0})
                return
            body, parts = request.body or {}, multipart(request)
            if parts:  # an upload: payload_json and files[n], as Discord takes them
                body = json.loads(parts["payload_json"].text) if "payload_json" in parts else {}
                body["_files"] = [p for name, p in parts.items() if name.startswith("files[")]
            refusal = voice_refusal(body, fake.refuse_voice)
            if refusal:
                send_json(self, 400, {"message": refusal, "code": 50161})
                return
            send_json(self, 200, fake._bot_message(match.group(1), body))
        elif method == "PATCH" and (match := MESSAGE.match(path)):
            edited = fake._edit(match.group(2), (request.body or {}).get("content", ""))
            if edited is None:
                send_json(self, 404, {"message": "Unknown Message", "code": 10008})
            else:
                send_json(self, 200, edited)
        elif method == "POST" and (match := TYPING.match(path)):
            fake._record("typing", match.group(1))
            self.send_response(204)
            self.send_header("content-length", "0")
            self.end_headers()
        elif method == "GET" and (match := CHANNEL.match(path)):
            channel = fake.channels.get(match.group(1))
            if channel is None:
                send_json(self, 404, {"message": "Unknown Channel", "code": 10003})
            else:
                send_json(self, 200, channel)
        else:
            send_json(self, 404, {"message": "404: Not Found", "code": 0})


def voice_refusal(body: dict[str, Any], refuse: bool) -> str:
    """Why Discord refuses a voice message (flag 8192): it must be one attachment with its
    ``duration_secs`` and ``waveform`` and no text; ``refuse``: the channel allows none."""
    if not int(body.get("flags") or 0) & 8192:
        return ""
    if refuse:
        return "Cannot send voice messages in this channel"
    meta = body.get("attachments") or []
    if (body.get("content") or len(meta) != 1 or len(body.get("_files") or []) != 1
            or "duration_secs" not in meta[0] or "waveform" not in meta[0]):
        return "Invalid Form Body: a voice message is one attachment with its duration and waveform"
    return ""

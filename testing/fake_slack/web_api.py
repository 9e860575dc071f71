"""The fake's Web API (``/api/<method>``, as slack-sdk calls it with ``base_url``): JSON or
form bodies, the token in ``Authorization: Bearer``; Slack's answers (HTTP 200 with
``{"ok": false, "error": ...}`` for a refused call, 429 with ``Retry-After`` and
``ratelimited`` when scripted). Files the test added are served at ``/files/<id>/<name>`` to
the bot token only."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlsplit

from ..local_server import RecordedRequest, send_json

PREFIX = "/api/"
BOT_METHODS = ("auth.test", "chat.postMessage", "chat.update", "conversations.info")


class WebApiHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def handle(self) -> None:
        threading.current_thread().name = "fake-slack-web"
        super().handle()

    @property
    def fake(self) -> Any:
        return self.server.state  # type: ignore[attr-defined]

    def _token(self) -> str:
        header = self.headers.get("authorization", "")
        return header[7:] if header.lower().startswith("bearer ") else ""

    def do_GET(self) -> None:  # noqa: N802
        path = urlsplit(self.path).path
        self.fake._record_request(RecordedRequest("GET", path, {}, self._headers(), None))
        if not path.startswith("/files/"):
            return send_json(self, 404, {"ok": False, "error": "unknown_method"})
        if self._token() != self.fake.bot_token:
            return send_json(self, 403, {"ok": False, "error": "not_authed"})
        content = self.fake.file_content(path.split("/")[2])
        if content is None:
            return send_json(self, 404, {"ok": False, "error": "file_not_found"})
        self.send_response(200)
        self.send_header("content-type", "application/octet-stream")
        self.send_header("content-length", str(len(content)))
        self.end_headers()
        self.wfile.write(content)

    def do_POST(self) -> None:  # noqa: N802
        url = urlsplit(self.path)
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        kind = self.headers.get("content-type", "")
        params: dict[str, Any] = {k: v[0] for k, v in parse_qs(url.query).items()}
        if raw and "json" in kind:
            params.update(json.loads(raw))
        elif raw:
            params.update({k: v[0] for k, v in parse_qs(raw.decode()).items()})
        method = url.path[len(PREFIX):] if url.path.startswith(PREFIX) else ""
        self.fake._record_request(RecordedRequest("POST", url.path, {}, self._headers(), params))
        token = self._token()
        if method == "apps.connections.open":
            if token != self.fake.app_token:
                return send_json(self, 200, {"ok": False, "error": "invalid_auth"})
            return send_json(self, 200, {"ok": True, "url": self.fake._socket_url()})
        if method not in BOT_METHODS:
            return send_json(self, 200, {"ok": False, "error": "unknown_method"})
        if token != self.fake.bot_token:
            return send_json(self, 200, {"ok": False, "error": "invalid_auth"})
        if method == "auth.test":
            return send_json(self, 200, {"ok": True, **self.fake.identity})
        if method == "conversations.info":
            found = self.fake.channels.get(str(params.get("channel")))
            if found is None:
                return send_json(self, 200, {"ok": False, "error": "channel_not_found"})
            return send_json(self, 200, {"ok": True, "channel": found})
        failure = self.fake._take_failure()
        if failure is not None:
            status, retry_after = failure
            headers = {"Retry-After": str(retry_after)} if retry_after is not None else None
            error = "ratelimited" if status == 429 else "internal_error"
            return send_json(self, status, {"ok": False, "error": error}, headers)
        if method == "chat.postMessage":
            message = self.fake._bot_posts(params)
            return send_json(self, 200, {"ok": True, "channel": message["channel"],
                                         "ts": message["ts"], "message": message})
        found = self.fake._bot_edits(params)  # chat.update
        if found is None:
            return send_json(self, 200, {"ok": False, "error": "message_not_found"})
        return send_json(self, 200, {"ok": True, "channel": found["channel"], "ts": found["ts"],
                                     "text": found["text"]})

    def _headers(self) -> dict[str, str]:
        headers = {k.lower(): v for k, v in self.headers.items()}
        if "authorization" in headers:
            headers["authorization"] = headers["authorization"].split(" ")[0] + " ***"
        return headers

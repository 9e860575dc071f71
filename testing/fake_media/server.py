"""The fake media API. A test scripts what it answers (:attr:`FakeMediaAPI.transcript`, the
audio :attr:`speech` returns, the image), points a provider at :attr:`openai_base_url` or
:attr:`fal_base_url` and reads the requests it received (:meth:`requests`, uploads with
``multipart``). Only ``KEY`` is accepted (``Authorization: Bearer KEY`` for OpenAI, ``Key
KEY`` for fal); another key gets the service's 401."""

from __future__ import annotations

import base64
import struct
import threading
import time
import zlib
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from ..local_server import (LocalHTTPServer, Part, RecordedRequest, ServedInBackground,
                            multipart, read_request, send_json)

KEY = "sk-fake-media-key"


def _png(width: int = 2, height: int = 2) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))

    rows = b"".join(b"\x00" + b"\xff\x80\x00" * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2,
                                                              0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


PNG = _png()
# what /v1/audio/speech answers per response_format: the formats' headers, then silence
SPEECH = {"mp3": b"ID3\x04\x00\x00\x00\x00\x00\x00" + bytes(256),
          "opus": b"OggS\x00\x02" + bytes(22) + b"\x13OpusHead\x01\x01" + bytes(200)}


@dataclass
class State:
    transcript: str = "a transcript"
    image: bytes = PNG
    fal_as_url: bool = False  # fal answers a URL on this server instead of a data URI
    lock: threading.Condition = field(default_factory=threading.Condition)
    closing: threading.Event = field(default_factory=threading.Event)
    requests: list[RecordedRequest] = field(default_factory=list)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: LocalHTTPServer

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802
        request = self._record()
        if request.path == "/files/image.png":
            self._send(200, self.server.state.image, "image/png")
        else:
            send_json(self, 404, {"detail": "Not Found"})

    def do_POST(self) -> None:  # noqa: N802
        request = self._record()
        state: State = self.server.state
        path = request.path
        if path.startswith("/fal/"):
            return self._fal(request, state)
        if request.headers.get("authorization") != f"Bearer {KEY}":
            return send_json(self, 401, {"error": {
                "message": "Incorrect API key provided", "type": "invalid_request_error",
                "code": "invalid_api_key"}})
        if path == "/v1/audio/speech":
            body = request.body if isinstance(request.body, dict) else {}
            if not body.get("input"):
                return send_json(self, 400, {"error": {"message": "input is required"}})
            kind = "opus" if body.get("response_format") == "opus" else "mp3"
            return self._send(200, SPEECH[kind], "audio/ogg" if kind == "opus" else "audio/mpeg")
        if path == "/v1/audio/transcriptions":
            parts = multipart(request)
            if "file" not in parts or "model" not in parts:
                return send_json(self, 400, {"error": {"message": "file and model are required"}})
            return send_json(self, 200, {"text": state.transcript})
        if path == "/v1/images/generations":
            return send_json(self, 200, {"created": int(time.time()), "data": [
                {"b64_json": base64.b64encode(state.image).decode(),
                 "revised_prompt": "a revised prompt"}]})
        send_json(self, 404, {"error": {"message": f"Unknown path {path}"}})

    def _fal(self, request: RecordedRequest, state: State) -> None:
        if request.headers.get("authorization") != f"Key {KEY}":
            return send_json(self, 401, {"detail": "Invalid API key"})
        body = request.body if isinstance(request.body, dict) else {}
        if not body.get("prompt"):
            return send_json(self, 422, {"detail": [{"loc": ["body", "prompt"],
                                                     "msg": "field required"}]})
        host, port = self.server.server_address[:2]
        url = (f"http://{host}:{port}/files/image.png" if state.fal_as_url else
               "data:image/png;base64," + base64.b64encode(state.image).decode())
        send_json(self, 200, {"images": [{"url": url, "content_type": "image/png",
                                          "width": 2, "height": 2}],
                              "seed": 42, "prompt": body["prompt"]})

    def _record(self) -> RecordedRequest:
        request = read_request(self)
        state: State = self.server.state
        with state.lock:
            state.requests.append(request)
            state.lock.notify_all()
        return request

    def _send(self, status: int, payload: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


class FakeMediaAPI(ServedInBackground):
    thread_name = "fake-media"
    key = KEY

    def __init__(self) -> None:
        self._state = State()

    def _build(self) -> LocalHTTPServer:
        return LocalHTTPServer(Handler, self._state)

    @property
    def url(self) -> str:
        assert self._server is not None, "start() the fake first"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def openai_base_url(self) -> str:
        return f"{self.url}/v1"

    @property
    def fal_base_url(self) -> str:
        return f"{self.url}/fal"

    @property
    def transcript(self) -> str:
        return self._state.transcript

    @transcript.setter
    def transcript(self, text: str) -> None:
        self._state.transcript = text

    @property
    def fal_as_url(self) -> bool:
        return self._state.fal_as_url

    @fal_as_url.setter
    def fal_as_url(self, value: bool) -> None:
        self._state.fal_as_url = value

    def requests(self, path: str | None = None) -> list[RecordedRequest]:
        with self._state.lock:
            return [r for r in self._state.requests if path is None or r.path == path]

    def uploads(self, path: str = "/v1/audio/transcriptions") -> list[dict[str, Part]]:
        """The multipart fields of each request to ``path``."""
        return [multipart(r) for r in self.requests(path)]

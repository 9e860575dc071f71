"""The fake Slack's state and its Socket Mode side (see the package docstring)."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import itertools
import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any, TypeVar

from ..local_server import LocalHTTPServer, RecordedRequest
from .web_api import PREFIX, WebApiHandler

T = TypeVar("T")
WAIT = 30.0


class FakeSlack:
    def __init__(self, bot_token: str = "xoxb-fake-bot-token",
                 app_token: str = "xapp-fake-app-token",
                 signing_secret: str = "fake-signing-secret"):
        self.bot_token, self.app_token, self.signing_secret = bot_token, app_token, signing_secret
        self.identity = {"url": "https://fake.slack.com/", "team": "Fake Team",
                         "user": "hermes", "team_id": "T0FAKE", "user_id": "UBOT0001",
                         "bot_id": "BBOT0001"}
        self.channels: dict[str, dict[str, Any]] = {}
        self.messages: list[dict[str, Any]] = []  # what the bot posted, edits applied
        self.requests: list[RecordedRequest] = []
        self.connections: list[str] = []  # the paths websockets connected to
        self.envelopes: dict[str, dict[str, Any]] = {}  # every envelope sent, by id
        self.acked: list[str] = []  # envelope ids, in the order acknowledged
        self.events_url = ""  # set: events are POSTed there, signed, instead of Socket Mode
        self.http_answers: list[tuple[int, bytes]] = []  # what the events URL answered
        self.closing = threading.Event()
        self._files: dict[str, bytes] = {}
        self._failures: list[tuple[int, float | None]] = []
        self._ts = itertools.count(1)
        self._ids = itertools.count(1)
        self._changed = threading.Condition()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._sockets: list[Any] = []
        self._ws_port = 0
        self._http: LocalHTTPServer | None = None
        self.api_base = ""

    # --- lifecycle ---------------------------------------------------------------------------
    def start(self) -> FakeSlack:
        started = threading.Event()
        self._loop = asyncio.new_event_loop()

        async def serve() -> Any:
            from websockets.asyncio.server import serve as ws_serve

            server = await ws_serve(self._socket_handler, "127.0.0.1", 0, ping_interval=None,
                                    close_timeout=1)
            self._ws_port = server.sockets[0].getsockname()[1]
            return server

        def run() -> None:
            assert self._loop is not None
            asyncio.set_event_loop(self._loop)
            self._ws_server = self._loop.run_until_complete(serve())
            started.set()
            self._loop.run_forever()

        self._thread = threading.Thread(target=run, name="fake-slack-socket", daemon=True)
        self._thread.start()
        if not started.wait(WAIT):
            raise RuntimeError("the fake Slack's websocket server did not start")
        self._http = LocalHTTPServer(WebApiHandler, self)
        self.api_base = f"http://127.0.0.1:{self._http.server_address[1]}{PREFIX}"
        self._http_thread = threading.Thread(target=self._http.serve_forever,
                                             kwargs={"poll_interval": 0.05},
                                             name="fake-slack-web", daemon=True)
        self._http_thread.start()
        return self

    def close(self) -> None:
        self.closing.set()
        if self._http is not None:
            self._http.shutdown()
            self._http.server_close()
            self._http = None
        if self._loop is not None and self._loop.is_running():
            async def stop() -> None:
                for ws in list(self._sockets):
                    await ws.close()
                self._ws_server.close()
                await self._ws_server.wait_closed()

            asyncio.run_coroutine_threadsafe(stop(), self._loop).result(WAIT)
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(WAIT)
            self._loop.close()

    def __enter__(self) -> FakeSlack:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # --- what a test reads -------------------------------------------------------------------
    def sent_to(self, channel: str, thread_ts: str | None = None) -> list[dict[str, Any]]:
        """The bot's messages in ``channel`` (in ``thread_ts`` when given), edits applied."""
        with self._changed:
            return [dict(m) for m in self.messages if m["channel"] == channel
                    and (thread_ts is None or m.get("thread_ts") == thread_ts)]

    def texts(self, channel: str, thread_ts: str | None = None) -> list[str]:
        return [m["text"] for m in self.sent_to(channel, thread_ts)]

    @property
    def unacked(self) -> list[str]:
        with self._changed:
            return [e for e in self.envelopes if e not in self.acked]

    def wait(self, predicate: Callable[[], T], timeout: float = WAIT) -> T:
        """``predicate()`` once it is truthy (checked at every change); AssertionError at
        ``timeout``. From async tests: ``await asyncio.to_thread(slack.wait, ...)``."""
        with self._changed:
            result = self._changed.wait_for(predicate, timeout)
        if not result:
            raise AssertionError(f"the fake Slack never got there within {timeout}s")
        return result

    # --- what a test does --------------------------------------------------------------------
    def add_file(self, name: str, content: bytes, mimetype: str,
                 size: int | None = None) -> dict[str, Any]:
        """A file as a message's ``files`` lists it (``size``: what Slack claims)."""
        file_id = f"F{next(self._ids):08d}"
        self._files[file_id] = content
        base = self.api_base[: -len(PREFIX)]
        return {"id": file_id, "name": name, "title": name, "mimetype": mimetype,
                "filetype": name.rsplit(".", 1)[-1], "size": len(content) if size is None else size,
                "url_private": f"{base}/files/{file_id}/{name}",
                "url_private_download": f"{base}/files/{file_id}/download/{name}"}

    def user_says(self, channel: str, user: str, text: str, *, thread_ts: str | None = None,
                  channel_type: str = "im", files: list[dict[str, Any]] | None = None,
                  mention: bool = False, **extra: Any) -> str:
        """A person's message as a ``message`` event (and, when it ``mention``s the bot in a
        channel, an ``app_mention`` too, as Slack sends both); returns its ``ts``."""
        if mention:
            text = f"<@{self.identity['user_id']}> {text}"
        ts = self._next_ts()
        event: dict[str, Any] = {"type": "message", "channel": channel, "user": user,
                                 "text": text, "ts": ts, "event_ts": ts,
                                 "channel_type": channel_type, "team": "T0FAKE", **extra}
        if thread_ts:
            event["thread_ts"] = thread_ts
        if files:
            event.update(files=files, subtype="file_share")
        self.emit(event)
        if mention and channel_type != "im":
            self.emit({**event, "type": "app_mention"})
        return ts

    def emit(self, event: dict[str, Any]) -> str:
        """Send ``event`` the way the app receives events (Socket Mode, or signed POSTs to
        ``events_url``); returns its event id."""
        event_id = f"Ev{next(self._ids):08d}"
        payload = {"token": "verification-token-unused", "team_id": "T0FAKE",
                   "api_app_id": "A0FAKE", "event": event, "type": "event_callback",
                   "event_id": event_id, "event_time": int(time.time())}
        if self.events_url:
            self.post_signed(json.dumps(payload).encode())
            return event_id
        envelope = {"envelope_id": f"env-{event_id}", "type": "events_api", "payload": payload,
                    "accepts_response_payload": False, "retry_attempt": 0, "retry_reason": ""}
        with self._changed:
            self.envelopes[envelope["envelope_id"]] = envelope
        self._on_loop(self._send_to_app(envelope))
        return event_id

    def post_signed(self, body: bytes, *, timestamp: int | None = None,
                    signature: str | None = None) -> tuple[int, bytes]:
        """POST ``body`` to ``events_url`` signed as Slack signs (``v0``, the signing
        secret), or with the given ``timestamp``/``signature``; returns the answer."""
        stamp = str(int(time.time()) if timestamp is None else timestamp)
        if signature is None:
            digest = hmac.new(self.signing_secret.encode(), b"v0:" + stamp.encode() + b":" + body,
                              hashlib.sha256).hexdigest()
            signature = f"v0={digest}"
        request = urllib.request.Request(self.events_url, body, method="POST", headers={
            "Content-Type": "application/json", "X-Slack-Request-Timestamp": stamp,
            "X-Slack-Signature": signature})
        try:
            with urllib.request.urlopen(request, timeout=WAIT) as response:
                answer = (response.status, response.read())
        except urllib.error.HTTPError as exc:
            answer = (exc.code, exc.read())
        with self._changed:
            self.http_answers.append(answer)
            self._changed.notify_all()
        return answer

    def disconnect_app(self) -> None:
        """Slack's ``disconnect`` message: the app opens a new connection (unacknowledged
        envelopes are sent again there)."""
        self._on_loop(self._send_raw({"type": "disconnect", "reason": "refresh_requested",
                                      "debug_info": {"host": "fake"}}))

    def drop(self) -> None:
        """Close the app's websocket without a word, as a network failure would."""
        async def close() -> None:
            for ws in list(self._sockets):
                ws.transport.abort()

        self._on_loop(close())

    def rate_limit(self, times: int = 1, retry_after: float = 0.05) -> None:
        with self._changed:
            self._failures.extend([(429, retry_after)] * times)

    # --- internals ---------------------------------------------------------------------------
    def _next_ts(self) -> str:
        return f"{1_700_000_000 + next(self._ts)}.{next(self._ids):06d}"

    def _socket_url(self) -> str:
        return f"ws://127.0.0.1:{self._ws_port}/link/?ticket=t{next(self._ids)}&app_id=A0FAKE"

    async def _socket_handler(self, ws: Any) -> None:
        with self._changed:
            self.connections.append(ws.request.path)
            self._changed.notify_all()
        self._sockets.append(ws)
        await ws.send(json.dumps({"type": "hello", "num_connections": 1,
                                  "debug_info": {"host": "fake"},
                                  "connection_info": {"app_id": "A0FAKE"}}))
        for envelope_id in self.unacked:  # what an earlier connection never acknowledged
            envelope = self.envelopes[envelope_id]
            envelope.update(retry_attempt=envelope["retry_attempt"] + 1, retry_reason="timeout")
            await ws.send(json.dumps(envelope))
        try:
            async for frame in ws:
                answer = json.loads(frame)
                with self._changed:
                    if answer.get("envelope_id") in self.envelopes:
                        self.acked.append(answer["envelope_id"])
                    self._changed.notify_all()
        except Exception:  # the app went away
            pass
        finally:
            self._sockets.remove(ws)

    async def _send_to_app(self, envelope: dict[str, Any]) -> None:
        if self._sockets:  # else: sent when the app connects (as Slack retries)
            await self._sockets[-1].send(json.dumps(envelope))

    async def _send_raw(self, message: dict[str, Any]) -> None:
        for ws in list(self._sockets):
            await ws.send(json.dumps(message))

    def _on_loop(self, coro: Any) -> Any:
        assert self._loop is not None
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(WAIT)

    def _record_request(self, request: RecordedRequest) -> None:
        with self._changed:
            self.requests.append(request)
            self._changed.notify_all()

    def _take_failure(self) -> tuple[int, float | None] | None:
        with self._changed:
            return self._failures.pop(0) if self._failures else None

    def file_content(self, file_id: str) -> bytes | None:
        return self._files.get(file_id)

    def _bot_posts(self, params: dict[str, Any]) -> dict[str, Any]:
        message = {"type": "message", "channel": str(params.get("channel")),
                   "text": str(params.get("text", "")), "ts": self._next_ts(),
                   "user": self.identity["user_id"], "bot_id": self.identity["bot_id"]}
        if params.get("thread_ts"):
            message["thread_ts"] = str(params["thread_ts"])
        with self._changed:
            self.messages.append(message)
            self._changed.notify_all()
        threading.Thread(target=self._echo, args=(dict(message),), daemon=True).start()
        return message

    def _echo(self, message: dict[str, Any]) -> None:
        """The bot's own message comes back as an event, as Slack sends it."""
        if not self.closing.is_set():
            try:
                self.emit({**message, "channel_type": "im" if message["channel"].startswith("D")
                           else "channel", "event_ts": message["ts"]})
            except Exception:
                pass

    def _bot_edits(self, params: dict[str, Any]) -> dict[str, Any] | None:
        with self._changed:
            for message in self.messages:
                if message["channel"] == params.get("channel") and message["ts"] == params.get(
                        "ts"):
                    message.update(text=str(params.get("text", "")), edited=True)
                    self._changed.notify_all()
                    return dict(message)
        return None

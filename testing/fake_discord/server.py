"""A fake Discord on 127.0.0.1 for tests: the gateway websocket and the REST API, run in a
background thread (the gateway on its own asyncio loop, REST on threads).

    with FakeDiscord(token="t") as discord:
        # platforms.discord: {api_base: discord.api_base}; DISCORD_BOT_TOKEN=t
        ...  # start the gateway; wait until the bot identified
        discord.wait(lambda: discord.identifies)
        discord.user_says("200", "42", "hello", username="alice")
        [reply] = discord.wait(lambda: discord.sent_to("200"))

A message the bot sends is also dispatched back on the gateway as its own MESSAGE_CREATE, as
Discord does. Test controls: :meth:`drop` (cut the connection, optionally holding reconnects
until :meth:`release`), :meth:`request_reconnect` (op 7), :meth:`invalidate_session` (op 9), :meth:`expire_sessions`,
:meth:`rate_limit` (the next sends get 429), :meth:`fail_sends` (another status),
:meth:`set_ack_heartbeats`.
"""

from __future__ import annotations

import itertools
import logging
import threading
from collections import deque
from collections.abc import Callable
from typing import Any, TypeVar

from ..local_server import LocalHTTPServer
from ..local_websocket import LocalWebsocketServer
from .gateway import FakeGateway
from .rest import PREFIX, RestHandler

T = TypeVar("T")
WAIT = 30.0
# websockets logs frames at DEBUG, IDENTIFY's token included: the fake's logger stays quiet
QUIET = logging.getLogger("hermes_agent.testing.fake_discord")
QUIET.setLevel(logging.WARNING)


class FakeDiscord:
    def __init__(self, token: str = "fake-bot-token", heartbeat_interval_ms: int = 1000):
        self.token = token
        self.bot_user = {"id": "900000000000000001", "username": "hermes-bot", "bot": True,
                         "discriminator": "0"}
        self.channels: dict[str, dict[str, Any]] = {}
        self.files: dict[str, bytes] = {}  # what users attached, served as the CDN does
        self.closing = threading.Event()
        self._ids = itertools.count(1_000_000_000_000_000_000)
        self._changed = threading.Condition()
        self._failures: deque[tuple[int, float | None]] = deque()
        self.records: dict[str, list[Any]] = {k: [] for k in (
            "connections", "heartbeats", "identifies", "resumes", "dispatched", "requests",
            "typing", "downloads", "uploads")}
        self.refuse_voice = False  # the bot's voice messages get a 400 (then it sends a file)
        self.messages: dict[str, dict[str, Any]] = {}  # every message, by id
        self._heartbeat_ms = heartbeat_interval_ms
        self._ws = LocalWebsocketServer(lambda ws: self.gateway.handler(ws),  # type: ignore[union-attr]
                                        name="fake-discord-gateway", logger=QUIET)
        self._http: LocalHTTPServer | None = None
        self._http_thread: threading.Thread | None = None
        self.gateway: FakeGateway | None = None
        self.gateway_url = ""
        self.api_base = ""

    # --- lifecycle ---------------------------------------------------------------------------
    def start(self) -> FakeDiscord:
        self.gateway = FakeGateway(self, self._heartbeat_ms)
        self.gateway_url = self._ws.start()
        self._http = LocalHTTPServer(RestHandler, self)
        self.api_base = f"http://127.0.0.1:{self._http.server_address[1]}{PREFIX}"
        self._http_thread = threading.Thread(target=self._http.serve_forever,
                                             kwargs={"poll_interval": 0.05},
                                             name="fake-discord-rest", daemon=True)
        self._http_thread.start()
        return self

    def close(self) -> None:
        self.closing.set()
        if self._http is not None:
            self._http.shutdown()
            self._http.server_close()
            self._http = None
        self._ws.close()

    def __enter__(self) -> FakeDiscord:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # --- what a test reads -------------------------------------------------------------------
    def __getattr__(self, name: str) -> list[Any]:
        records = self.__dict__.get("records") or {}
        if name in records:  # connections, heartbeats, identifies, resumes, ...
            with self._changed:
                return list(records[name])
        raise AttributeError(name)

    def sent_to(self, channel_id: str) -> list[dict[str, Any]]:
        """The messages the bot sent in a channel, in order (edits applied)."""
        with self._changed:
            return [m for m in self.messages.values()
                    if m["channel_id"] == channel_id and m["author"]["id"] == self.bot_user["id"]]

    def wait(self, predicate: Callable[[], T], timeout: float = WAIT) -> T:
        """``predicate()`` once it is truthy (checked at every change); AssertionError at
        ``timeout``. From async tests: ``await asyncio.to_thread(discord.wait, ...)``."""
        with self._changed:
            result = self._changed.wait_for(predicate, timeout)
        if not result:
            raise AssertionError(f"the fake Discord never got there within {timeout}s")
        return result

    # --- what a test does --------------------------------------------------------------------
    def add_channel(self, channel_id: str, *, guild_id: str | None = None, name: str = "",
                    kind: int | None = None, parent_id: str | None = None) -> dict[str, Any]:
        channel = {"id": channel_id, "type": kind if kind is not None else (0 if guild_id else 1),
                   "name": name or None, "guild_id": guild_id, "parent_id": parent_id}
        self.channels[channel_id] = channel
        return channel

    def attachment(self, data: bytes, filename: str, content_type: str) -> dict[str, Any]:
        """A file a user attaches (for ``user_says(attachments=[...])``), served at its
        ``url`` as Discord's CDN serves it."""
        attachment_id = str(next(self._ids))
        path = f"/attachments/{attachment_id}/{filename}"
        self.files[path] = data
        origin = self.api_base.removesuffix(PREFIX)
        return {"id": attachment_id, "filename": filename, "content_type": content_type,
                "size": len(data), "url": origin + path, "proxy_url": origin + path}

    def user_says(self, channel_id: str, user_id: str, content: str, *, username: str = "",
                  guild_id: str | None = None, bot: bool = False,
                  attachments: list[dict[str, Any]] | None = None) -> str:
        """A person's message, dispatched as MESSAGE_CREATE; returns its id."""
        message = self._message(channel_id, {"id": user_id, "username": username or user_id,
                                             "bot": bot, "discriminator": "0"}, content, guild_id)
        message["attachments"] = list(attachments or ())
        self._on_loop(self.gateway_dispatch("MESSAGE_CREATE", message))
        return str(message["id"])

    def user_voice(self, channel_id: str, user_id: str, audio: bytes, *, username: str = "",
                   guild_id: str | None = None, filename: str = "voice-message.ogg",
                   content_type: str = "audio/ogg") -> str:
        """A person's voice message (flag IS_VOICE_MESSAGE, one Ogg attachment on the fake's
        CDN path), dispatched as MESSAGE_CREATE; returns its id."""
        message = self._message(channel_id, {"id": user_id, "username": username or user_id,
                                             "bot": False, "discriminator": "0"}, "", guild_id)
        note = self.attachment(audio, filename, content_type)
        message["flags"] = 8192
        message["attachments"] = [{**note, "duration_secs": 2.0, "waveform": "AAAA"}]
        self._on_loop(self.gateway_dispatch("MESSAGE_CREATE", message))
        return str(message["id"])

    def create_thread(self, thread_id: str, parent_id: str, guild_id: str) -> None:
        channel = self.add_channel(thread_id, guild_id=guild_id, kind=11, parent_id=parent_id)
        self._on_loop(self.gateway_dispatch("THREAD_CREATE", {**channel, "newly_created": True}))

    def drop(self, hold: bool = False) -> None:
        """Cut the bot's connection; ``hold``: new connections wait until :meth:`release`."""
        assert self.gateway is not None
        self._on_loop(self.gateway.drop(hold))

    def release(self) -> None:
        assert self.gateway is not None and self._ws.loop is not None
        self._ws.loop.call_soon_threadsafe(self.gateway.open.set)

    def request_reconnect(self) -> None:
        assert self.gateway is not None
        self._on_loop(self.gateway.send_op(7, None))

    def invalidate_session(self, resumable: bool) -> None:
        assert self.gateway is not None
        self._on_loop(self.gateway.send_op(9, resumable))

    def expire_sessions(self) -> None:
        """Forget every session: a RESUME now gets INVALID_SESSION (op 9, not resumable)."""
        assert self.gateway is not None

        async def expire() -> None:
            assert self.gateway is not None
            self.gateway.sessions.clear()

        self._on_loop(expire())

    def set_ack_heartbeats(self, ack: bool) -> None:
        assert self.gateway is not None
        self.gateway.ack_heartbeats = ack

    def rate_limit(self, times: int = 1, retry_after: float = 0.05) -> None:
        """The next ``times`` message sends get a 429 asking to wait ``retry_after`` s."""
        with self._changed:
            self._failures.extend([(429, retry_after)] * times)

    def fail_sends(self, status: int, times: int = 1) -> None:
        """The next ``times`` message sends get ``status`` (a 500, a 403 ...), not delivered."""
        with self._changed:
            self._failures.extend([(status, None)] * times)

    # --- internals (the gateway and REST handlers call these) --------------------------------
    async def gateway_dispatch(self, name: str, data: dict[str, Any]) -> None:
        assert self.gateway is not None
        await self.gateway.dispatch(name, data)

    def _on_loop(self, coro: Any) -> Any:
        return self._ws.run(coro)

    def _record(self, kind: str, value: Any) -> None:
        with self._changed:
            self.records[kind].append(value)
            self._changed.notify_all()

    def _take_failure(self) -> tuple[int, float | None] | None:
        with self._changed:
            return self._failures.popleft() if self._failures else None

    def _message(self, channel_id: str, author: dict[str, Any], content: str,
                 guild_id: str | None, reference: Any = None, store: bool = True
                 ) -> dict[str, Any]:
        channel = self.channels.get(channel_id) or self.add_channel(channel_id, guild_id=guild_id)
        message = {"id": str(next(self._ids)), "channel_id": channel_id, "author": author,
                   "content": content, "type": 19 if reference else 0, "tts": False,
                   "mentions": [], "attachments": [], "embeds": [], "edited_timestamp": None,
                   "timestamp": "2026-01-01T00:00:00.000000+00:00"}
        guild = guild_id or channel.get("guild_id")
        if guild:
            message["guild_id"] = guild
        if reference:
            message["message_reference"] = reference
        if store:
            self._store(message)
        return message

    def _store(self, message: dict[str, Any]) -> None:
        with self._changed:
            self.messages[message["id"]] = message
            self._changed.notify_all()

    def _bot_message(self, channel_id: str, body: dict[str, Any]) -> dict[str, Any]:
        """A message the bot sent; dispatched back to it, as Discord does, before a test can
        see it in :meth:`sent_to` (so the session's ``seq`` already counts it)."""
        message = self._message(channel_id, dict(self.bot_user), str(body.get("content", "")),
                                None, body.get("message_reference"), store=False)
        if body.get("flags"):
            message["flags"] = body["flags"]
        for part in body.get("_files") or []:  # uploads: their bytes in records["uploads"]
            message["attachments"].append({
                "id": str(next(self._ids)), "filename": part.filename, "size": len(part.content),
                "content_type": part.content_type})
            self._record("uploads", (channel_id, part))
        self._on_loop(self.gateway_dispatch("MESSAGE_CREATE", message))
        self._store(message)
        return message

    def _edit(self, message_id: str, content: str) -> dict[str, Any] | None:
        with self._changed:
            message = self.messages.get(message_id)
            if message is None:
                return None
            message.update(content=content, edited_timestamp="2026-01-01T00:00:01+00:00")
            self._changed.notify_all()
            return dict(message)

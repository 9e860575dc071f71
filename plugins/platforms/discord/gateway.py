"""The Discord gateway client: one websocket (the ``websockets`` library), HELLO then
IDENTIFY (or RESUME), heartbeats at the server's interval (the first one jittered), and every
dispatch handed to a callback. A lost connection, a missed heartbeat ACK, RECONNECT (op 7) and
a resumable INVALID_SESSION (op 9) reconnect and RESUME with the session id and the last
sequence number, so the events sent meanwhile are replayed; a session that cannot be resumed is
identified anew. Close codes that forbid reconnecting (4004 and the like) stop it with
``fatal`` saying what to fix."""

from __future__ import annotations

import asyncio
import json
import logging
import platform
import random
from collections.abc import Awaitable, Callable
from typing import Any

from .settings import TOKEN_ENV, Settings

log = logging.getLogger("hermes_agent.gateway.discord")
# The websockets library logs frames at DEBUG, IDENTIFY's token included: its own logger, never
# below INFO.
_WS_LOG = logging.getLogger("hermes_agent.gateway.discord.websocket")
_WS_LOG.setLevel(logging.INFO)

DISPATCH, HEARTBEAT, IDENTIFY, RESUME, RECONNECT, INVALID_SESSION, HELLO, HEARTBEAT_ACK = (
    0, 1, 2, 6, 7, 9, 10, 11)
MAX_DELAY = 60.0
FATAL = {
    4004: f"Discord refused the bot token (close code 4004, authentication failed); set a valid "
          f"{TOKEN_ENV}",
    4010: "Discord rejected the shard (close code 4010)",
    4011: "Discord requires sharding for this bot (close code 4011): it is in too many guilds "
          "for one connection",
    4012: "Discord rejected the gateway API version (close code 4012)",
    4013: "Discord rejected the intents (close code 4013); fix platforms.discord.intents",
    4014: "Discord refused a privileged intent (close code 4014); turn on the Message Content "
          "intent for the bot (Developer Portal > Bot > Privileged Gateway Intents)",
}
NO_RESUME = (4007, 4009)  # invalid seq, session timed out: identify anew

Dispatch = Callable[[str, dict[str, Any]], None]


class FatalGatewayError(RuntimeError):
    """Reconnecting cannot help; the message says what to fix."""


class _Reconnect(Exception):
    """This connection is done; connect again (and resume when there is a session)."""


class GatewayClient:
    """``gateway_url()`` gives the URL to identify at; ``on_dispatch(name, data)`` gets every
    event. :meth:`run` keeps the connection up until :meth:`close` or a fatal error."""

    def __init__(self, settings: Settings, gateway_url: Callable[[], Awaitable[str]],
                 on_dispatch: Dispatch):
        self.settings = settings
        self._gateway_url = gateway_url
        self._on_dispatch = on_dispatch
        self.session_id: str | None = None
        self.seq: int | None = None
        self.resume_url: str | None = None
        self.user_id: str | None = None
        self.ready = asyncio.Event()  # set at READY/RESUMED, cleared while disconnected
        self.fatal: str | None = None
        self._ws: Any = None
        self._acked = True
        self._closing = False

    async def run(self) -> None:
        delay = self.settings.reconnect_delay
        while not self._closing:
            try:
                url = self.resume_url if self.session_id and self.resume_url else (
                    await self._gateway_url())
                await self._connection(url)
                delay = self.settings.reconnect_delay
                continue  # asked to reconnect (op 7, op 9, missed ACK): at once
            except FatalGatewayError as exc:
                self.fatal = str(exc)
                log.error("discord: %s; the Discord platform stops", exc)
                return
            except Exception as exc:  # network, handshake, a malformed payload: reconnect
                if self._closing:
                    return
                if self.ready.is_set():  # this connection worked: retry soon again
                    delay = self.settings.reconnect_delay
                log.warning("discord: gateway connection lost (%s: %s); reconnecting in %.1fs%s",
                            type(exc).__name__, exc, delay,
                            " to resume" if self.session_id else "")
            finally:
                self.ready.clear()
                self._ws = None
            await asyncio.sleep(delay)
            delay = min(delay * 2, MAX_DELAY)

    async def close(self) -> None:
        self._closing = True
        if self._ws is not None:
            await self._ws.close(1000)  # 1000 ends the session on Discord's side

    # --- one connection ----------------------------------------------------------------------
    async def _connection(self, url: str) -> None:
        from websockets.asyncio.client import connect
        from websockets.exceptions import ConnectionClosed

        target = url.rstrip("/") + "/?v=10&encoding=json" if "?" not in url else url
        async with connect(target, proxy=None, logger=_WS_LOG, ping_interval=None,
                           max_size=None, open_timeout=self.settings.connect_timeout) as ws:
            self._ws = ws
            beat: asyncio.Task[None] | None = None
            try:
                hello = json.loads(await asyncio.wait_for(ws.recv(), self.settings.connect_timeout))
                if hello.get("op") != HELLO:
                    raise ValueError(f"expected HELLO, got op {hello.get('op')}")
                self._acked = True
                beat = asyncio.create_task(
                    self._heartbeat(ws, hello["d"]["heartbeat_interval"] / 1000))
                await (self._resume(ws) if self.session_id else self._identify(ws))
                async for raw in ws:
                    await self._handle(ws, json.loads(raw))
            except ConnectionClosed:
                pass
            except _Reconnect:
                await ws.close(4000, "reconnecting")  # not 1000: the session stays resumable
                return
            finally:
                if beat is not None:
                    beat.cancel()
        self._closed(ws.close_code)

    def _closed(self, code: int | None) -> None:
        """What the close code means: fatal, a fresh session, or a plain reconnect."""
        if self._closing:
            return
        if code in FATAL:
            raise FatalGatewayError(FATAL[code])
        if code in NO_RESUME:
            self._forget()
        raise ConnectionError(f"closed with code {code}")

    def _forget(self) -> None:
        self.session_id = self.seq = self.resume_url = None

    async def _handle(self, ws: Any, payload: dict[str, Any]) -> None:
        op = payload.get("op")
        if payload.get("s") is not None:
            self.seq = payload["s"]
        if op == DISPATCH:
            name, data = str(payload.get("t")), payload.get("d") or {}
            if name == "READY":
                self.session_id = data["session_id"]
                self.resume_url = data.get("resume_gateway_url") or None
                self.user_id = str(data["user"]["id"])
                log.info("discord: connected as %s", data["user"].get("username", self.user_id))
                self.ready.set()
            elif name == "RESUMED":
                log.info("discord: session resumed")
                self.ready.set()
            self._on_dispatch(name, data)
        elif op == HEARTBEAT:  # the server asks for one now
            await self._beat(ws)
        elif op == HEARTBEAT_ACK:
            self._acked = True
        elif op == RECONNECT:
            log.info("discord: the gateway asked to reconnect; resuming")
            raise _Reconnect
        elif op == INVALID_SESSION:
            if not payload.get("d"):
                log.info("discord: the session is invalid; identifying anew")
                self._forget()
                await asyncio.sleep(self.settings.invalid_session_delay * (0.5 + random.random()))
            raise _Reconnect

    async def _heartbeat(self, ws: Any, interval: float) -> None:
        from websockets.exceptions import ConnectionClosed

        await asyncio.sleep(interval * random.random())  # jitter: not every bot at once
        try:
            while True:
                if not self._acked:
                    log.warning("discord: no heartbeat ACK since the last beat; reconnecting "
                                "to resume")
                    await ws.close(4000, "no heartbeat ack")
                    return
                await self._beat(ws)
                await asyncio.sleep(interval)
        except ConnectionClosed:  # the reader sees it too and reconnects
            return

    async def _beat(self, ws: Any) -> None:
        self._acked = False
        await ws.send(json.dumps({"op": HEARTBEAT, "d": self.seq}))

    async def _identify(self, ws: Any) -> None:
        await ws.send(json.dumps({"op": IDENTIFY, "d": {
            "token": self.settings.token, "intents": self.settings.intents,
            "properties": {"os": platform.system().lower(), "browser": "hermes",
                           "device": "hermes"}}}))

    async def _resume(self, ws: Any) -> None:
        await ws.send(json.dumps({"op": RESUME, "d": {
            "token": self.settings.token, "session_id": self.session_id, "seq": self.seq}}))

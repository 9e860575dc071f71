"""The fake's gateway: a ``websockets`` server speaking Discord's op codes. Each connection
gets HELLO (op 10); heartbeats (op 1) are ACKed (op 11); IDENTIFY (op 2) with the right token
starts a session and gets READY, a wrong one is closed with 4004; RESUME (op 6) replays the
session's events after the given ``seq`` and sends RESUMED, or INVALID_SESSION (op 9) when the
session is unknown. Events carry increasing ``s`` per session and are kept, so the events
dispatched while no connection is live are replayed on RESUME. Runs on the fake's own loop."""

from __future__ import annotations

import asyncio
import json
import uuid
from dataclasses import dataclass, field
from typing import Any

from .host import DiscordHost


@dataclass
class Session:
    id: str
    seq: int = 0
    events: list[dict[str, Any]] = field(default_factory=list)  # every dispatch, in order


class FakeGateway:
    def __init__(self, fake: DiscordHost, heartbeat_interval_ms: int):
        self.fake = fake
        self.heartbeat_interval_ms = heartbeat_interval_ms
        self.sessions: dict[str, Session] = {}
        self.session: Session | None = None  # the latest session
        self.live: Any = None  # the connection the session is on, None while dropped
        self.open = asyncio.Event()  # cleared by hold(): new connections wait for it
        self.open.set()
        self.ack_heartbeats = True

    async def handler(self, ws: Any) -> None:
        fake = self.fake
        fake._record("connections", ws.request.path)
        await self.open.wait()
        await ws.send(json.dumps({"op": 10, "s": None, "t": None,
                                  "d": {"heartbeat_interval": self.heartbeat_interval_ms}}))
        try:
            async for raw in ws:
                payload = json.loads(raw)
                op, data = payload.get("op"), payload.get("d")
                if op == 1:
                    fake._record("heartbeats", data)
                    if self.ack_heartbeats:
                        await ws.send(json.dumps({"op": 11, "s": None, "t": None, "d": None}))
                elif op == 2:
                    await self._identify(ws, data or {})
                elif op == 6:
                    await self._resume(ws, data or {})
                else:
                    await ws.close(4001, "Unknown opcode.")
        finally:
            if self.live is ws:
                self.live = None

    async def _identify(self, ws: Any, data: dict[str, Any]) -> None:
        fake = self.fake
        fake._record("identifies", {k: v for k, v in data.items() if k != "token"})
        if data.get("token") != fake.token:
            await ws.close(4004, "Authentication failed.")
            return
        self.session = Session(uuid.uuid4().hex)
        self.sessions[self.session.id] = self.session
        self.live = ws
        await self.dispatch("READY", {
            "v": 10, "user": fake.bot_user, "session_id": self.session.id,
            "resume_gateway_url": f"{fake.gateway_url}/resume", "guilds": [],
            "application": {"id": fake.bot_user["id"], "flags": 0}})

    async def _resume(self, ws: Any, data: dict[str, Any]) -> None:
        fake = self.fake
        fake._record("resumes", {k: v for k, v in data.items() if k != "token"})
        session = self.sessions.get(str(data.get("session_id")))
        if data.get("token") != fake.token:
            await ws.close(4004, "Authentication failed.")
            return
        if session is None:
            await ws.send(json.dumps({"op": 9, "s": None, "t": None, "d": False}))
            return
        self.session, self.live = session, ws
        after = int(data.get("seq") or 0)
        for event in [e for e in session.events if e["s"] > after]:
            await ws.send(json.dumps(event))
        await self.dispatch("RESUMED", {})

    async def dispatch(self, name: str, data: dict[str, Any]) -> None:
        """An event for the latest session: kept for replay, sent when a connection is live."""
        session = self.session
        if session is None:
            raise RuntimeError("no gateway session yet: the bot has not identified")
        session.seq += 1
        event = {"op": 0, "t": name, "s": session.seq, "d": data}
        session.events.append(event)
        self.fake._record("dispatched", event)
        if self.live is not None:
            try:
                await self.live.send(json.dumps(event))
            except Exception:  # the connection just went: the event waits for RESUME
                self.live = None

    async def drop(self, hold: bool) -> None:
        """Cut the live connection without a close frame (a network failure)."""
        if hold:
            self.open.clear()
        ws, self.live = self.live, None
        if ws is not None:
            ws.transport.abort()

    async def send_op(self, op: int, data: Any) -> None:
        if self.live is None:
            raise RuntimeError("no live gateway connection")
        await self.live.send(json.dumps({"op": op, "s": None, "t": None, "d": data}))

"""The gateway as one replica of several sharing one queue: used when the session store
offers one (the ``postgres`` store's ``gateway_queue()``; ``gateway.shared_queue: false``
turns it off). Any replica may receive a platform's message; it goes to the shared queue,
and the replica holding the chat's lease runs its turns. This module is the replica's side:
claiming chats and their messages, renewing the leases of chats with work, letting idle
chats go (their agent too: another replica may serve them next, from the stored session),
and telling the others it is alive."""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import uuid
from dataclasses import asdict, fields
from typing import TYPE_CHECKING, Any

from hermes_agent.api import InboundMessage

from .chat import Queued
from .questions import answers_question

if TYPE_CHECKING:
    from .runner import GatewayRunner

log = logging.getLogger("hermes_agent.gateway")
_FIELDS = {f.name for f in fields(InboundMessage)}


class SharedChatMap:
    """Which session each chat continues, in the shared queue's database."""

    def __init__(self, queue: Any):
        self.queue = queue

    def get(self, key: str) -> str | None:
        return self.queue.session_of(key)  # type: ignore[no-any-return]

    def set(self, key: str, session_id: str) -> None:
        self.queue.set_session(key, session_id)

    def discard(self, key: str) -> None:
        self.queue.set_session(key, None)


class Replica:
    """One gateway's part in the shared queue."""

    def __init__(self, runner: GatewayRunner, queue: Any):
        self.runner, self.queue = runner, queue
        config = runner.kernel.config
        self.ttl = float(config.get("gateway.lease_seconds", 15.0))
        self.capacity = int(config.get("gateway.max_concurrent_turns", 256))
        self.name = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"
        self.task: asyncio.Task[None] | None = None
        self.wake = asyncio.Event()
        self._listening: asyncio.Future[None] | None = None  # one LISTEN wait at a time

    # --- inbound -----------------------------------------------------------------------
    async def accept(self, key: str, message: InboundMessage) -> None:
        data = asdict(message)
        data["raw"] = None  # the platform's payload stays with the replica that received it
        dedupe = (f"{message.platform}:{message.chat_id}:{message.message_id}"
                  if message.message_id else None)
        await self.runner.in_thread(self.queue.accept, key, data, dedupe)
        self.wake.set()

    async def done(self, message_id: int) -> None:
        await self.runner.in_thread(self.queue.done, message_id)

    # --- the loop ----------------------------------------------------------------------
    def start(self) -> None:
        self.task = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        upkeep_every = max(0.5, self.ttl / 3)
        last_upkeep = 0.0
        loop = asyncio.get_running_loop()
        while self.runner.accepting:
            try:
                claimed = await self._claim()
                if loop.time() - last_upkeep >= upkeep_every:
                    await self._upkeep()
                    last_upkeep = loop.time()
            except Exception as exc:  # the database went away: retry after a pause
                log.warning("gateway: the shared queue failed (%s); retrying", exc)
                claimed = 0
                await asyncio.sleep(1.0)
            if not claimed:
                self.wake.clear()
                if self._listening is None or self._listening.done():
                    self._listening = asyncio.ensure_future(
                        self.runner.in_thread(self.queue.wait, 1.0))
                woken = asyncio.ensure_future(self.wake.wait())
                await asyncio.wait({self._listening, woken}, return_when=asyncio.FIRST_COMPLETED)
                woken.cancel()

    async def _claim(self) -> int:
        runner = self.runner
        room = self.capacity - sum(1 for chat in runner.chats.values()
                                   if chat.busy or not chat.queue.empty())
        if room <= 0:
            return 0
        rows = await runner.in_thread(self.queue.claim, self.name, self.ttl, room)
        for message_id, _key, data, attempts in rows:
            message = InboundMessage(**{k: v for k, v in data.items() if k in _FIELDS})
            chat = runner._chat(message)
            if answers_question(chat, message.user_id, message.text):
                await self.done(message_id)  # the answer to a question of a running turn
                continue
            chat.queue.put_nowait(Queued(message_id, message, replayed=attempts > 1,
                                         shared=True))
        if rows:
            runner.write_state()
        return len(rows)

    async def _upkeep(self) -> None:
        """Renew the leases of chats with work, let idle chats go, say we are alive."""
        runner = self.runner
        working = [key for key, chat in runner.chats.items()
                   if chat.busy or not chat.queue.empty() or chat.question is not None]
        idle = [key for key in runner.chats if key not in working]
        held = await runner.in_thread(self.queue.renew, self.name, working, self.ttl)
        lost = set(working) - set(held)
        if lost:  # we stalled past the lease: another replica may have taken them
            log.warning("gateway: lost the lease of %d chat(s) while serving them", len(lost))
        if idle:
            await runner.in_thread(self.queue.release, self.name, idle)
            for key in idle:
                chat = runner.chats.pop(key)
                if chat.task is not None:
                    chat.task.cancel()  # its agent goes too: the next lease resumes the session
        await runner.in_thread(self.queue.heartbeat, self.name, {
            "pid": os.getpid(), "host": socket.gethostname(),
            "platforms": sorted(set(runner.adapters) - set(runner.failed)),
            "chats": len(runner.chats),
            "turns_running": sum(chat.busy for chat in runner.chats.values())})

    async def stop_claiming(self) -> None:
        if self.task is not None:
            self.task.cancel()
            await asyncio.gather(self.task, return_exceptions=True)
        if self._listening is not None:
            await asyncio.gather(self._listening, return_exceptions=True)

    async def stop(self) -> None:
        """After the drain: give up every lease and leave the replica list."""
        await self.stop_claiming()
        try:
            await self.runner.in_thread(self.queue.leave, self.name)
        except Exception as exc:
            log.warning("gateway: could not leave the shared queue cleanly (%s); its leases "
                        "expire in %.0f s", exc, self.ttl)
        self.queue.close()

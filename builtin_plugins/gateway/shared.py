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
from collections.abc import Callable
from dataclasses import fields
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from hermes_agent.api import GatewayQueue, InboundMessage, PlatformAdapter

from .chat import Chat, Queued
from .questions import answers_question

if TYPE_CHECKING:
    from hermes_agent import Kernel

log = logging.getLogger("hermes_agent.gateway")
T = TypeVar("T")
_FIELDS = {f.name for f in fields(InboundMessage)}
CLAIM_BATCH = 8  # chats leased per claim
HOLD_WAIT = 300.0  # seconds a request waits for another replica to finish its chat's turn


class SharedChatMap:
    """Which session each chat continues, in the shared queue's database."""

    def __init__(self, queue: GatewayQueue):
        self.queue = queue

    def get(self, key: str) -> str | None:
        return self.queue.session_of(key)

    def set(self, key: str, session_id: str) -> None:
        self.queue.set_session(key, session_id)

    def discard(self, key: str) -> None:
        self.queue.set_session(key, None)


class ReplicaRunner(Protocol):
    """What a replica uses of its runner (:class:`.runner.GatewayRunner`, which builds the
    replica and hands itself to it)."""

    kernel: Kernel
    adapters: dict[str, PlatformAdapter]
    chats: dict[str, Chat]
    failed: dict[str, str]
    accepting: bool
    stopped: bool

    async def in_thread(self, fn: Callable[..., T], *args: Any) -> T: ...

    def still_allowed(self, message: InboundMessage, inbox_id: int) -> bool: ...

    def _chat(self, message: InboundMessage) -> Chat: ...

    def write_state(self) -> None: ...


class Replica:
    """One gateway's part in the shared queue."""

    def __init__(self, runner: ReplicaRunner, queue: GatewayQueue):
        self.runner, self.queue = runner, queue
        config = runner.kernel.config
        self.ttl = float(config.get("gateway.lease_seconds", 15.0))
        self.capacity = int(config.get("gateway.max_concurrent_turns", 256))
        self.name = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"
        self.task: asyncio.Task[None] | None = None
        self.wake = asyncio.Event()
        self._listening: asyncio.Future[None] | None = None  # one LISTEN wait at a time
        self.keeper: asyncio.Task[None] | None = None
        self.claim_lock = asyncio.Lock()  # a claim and an upkeep never interleave
        self.lost: set[str] = set()  # chats whose lease lapsed while this replica served them
        self.exclusive: list[str] = []  # platforms only one replica may receive
        self.receiving: list[str] = []  # those this replica receives

    # --- inbound -----------------------------------------------------------------------
    async def accept(self, key: str, message: InboundMessage) -> None:
        # the platform's payload stays with the replica that received it (and is not copied:
        # asdict() would deep-copy it, and a platform's own objects may not copy)
        data = {name: getattr(message, name) for name in _FIELDS if name != "raw"}
        data["raw"] = None
        dedupe = (f"{message.platform}:{message.chat_id}:{message.message_id}"
                  if message.message_id else None)
        await self.runner.in_thread(self.queue.accept, key, data, dedupe)
        self.wake.set()

    async def hold(self, chat_key: str, timeout: float = HOLD_WAIT) -> bool:
        """Take the chat's lease for a message this replica answers itself (a request that
        waits for its reply, as the api-server's do); False if another replica kept it for
        ``timeout`` seconds."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            async with self.claim_lock:  # not let go by an upkeep in between
                if await self.runner.in_thread(self.queue.lease, self.name, chat_key, self.ttl):
                    self.lost.discard(chat_key)
                    return True
            if loop.time() >= deadline:
                return False
            await asyncio.sleep(0.1)

    def idle(self, chat_key: str) -> None:
        """A chat's last message is finished: let its lease go now (not at the next upkeep),
        so a request for it at another replica need not wait."""
        loop = asyncio.get_running_loop()
        loop.create_task(self._let_go(chat_key))

    async def _let_go(self, chat_key: str) -> None:
        async with self.claim_lock:
            chat = self.runner.chats.get(chat_key)
            if chat is None or chat.outstanding or chat.busy or chat.question is not None \
                    or self.runner.stopped:
                return
            try:
                await self.runner.in_thread(self.queue.release, self.name, [chat_key])
            except Exception as exc:  # the next upkeep tries again
                log.debug("gateway: letting %s go failed: %s", chat_key, exc)
                return
            self.runner.chats.pop(chat_key, None)
            self.lost.discard(chat_key)
            if chat.task is not None:
                chat.task.cancel()

    async def done(self, message_id: int) -> None:
        await self.runner.in_thread(self.queue.done, message_id)

    # --- the loop ----------------------------------------------------------------------
    def prepare(self, adapters: dict[str, Any]) -> None:
        """Before connecting: platforms that allow one receiver (Telegram's long polling)
        connect without receiving; the replica that leads them starts it."""
        self.exclusive = [name for name, adapter in adapters.items()
                          if getattr(adapter, "exclusive_receiver", False)]
        for name in self.exclusive:
            adapters[name].receive_on_connect = False

    def start(self) -> None:
        loop = asyncio.get_running_loop()
        self.task = loop.create_task(self._run())
        self.keeper = loop.create_task(self._keep_leases())

    async def _keep_leases(self) -> None:
        """Renew the leases of chats with work every quarter lease, on its own timer (a
        busy claim loop must not let a lease lapse under a running turn)."""
        while True:  # through the drain too: until stop() after it
            try:
                await self._lead()
                await self._upkeep()
            except Exception as exc:
                log.warning("gateway: renewing the shared queue's leases failed (%s)", exc)
            await asyncio.sleep(self.ttl / 4)

    def holds(self, chat_key: str) -> bool:
        """False once this replica lost the chat's lease (it stalled past it): another
        replica answers the chat's messages now, so this one must not."""
        return chat_key not in self.lost

    async def _lead(self) -> None:
        """Take the receiving of each exclusive platform whose lock is free."""
        for name in list(self.exclusive):
            adapter = self.runner.adapters.get(name)
            if adapter is None or name in self.receiving:
                continue
            if await self.runner.in_thread(self.queue.try_lead, f"receiver:{name}"):
                log.info("gateway: this replica receives %s", name)
                self.receiving.append(name)
                await adapter.start_receiving()

    async def _run(self) -> None:
        while self.runner.accepting:
            try:
                claimed = await self._claim()
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
        async with self.claim_lock:  # else an upkeep could let go of a chat being claimed
            return await self._claim_now()

    async def _claim_now(self) -> int:
        runner = self.runner
        room = self.capacity - sum(1 for chat in runner.chats.values() if chat.outstanding)
        if room <= 0:
            return 0
        # a few chats at a time, so replicas woken together share the work
        rows = await runner.in_thread(self.queue.claim, self.name, self.ttl,
                                      min(room, CLAIM_BATCH))
        for message_id, _key, data, attempts in rows:
            message = InboundMessage(**{k: v for k, v in data.items() if k in _FIELDS})
            if not runner.still_allowed(message, message_id):
                await self.done(message_id)
                continue
            chat = runner._chat(message)
            if answers_question(chat, message.user_id, message.text):
                await self.done(message_id)  # the answer to a question of a running turn
                continue
            chat.put(Queued(message_id, message, replayed=attempts > 1, shared=True))
        if rows:
            runner.write_state()
        return len(rows)

    async def _upkeep(self) -> None:
        """Renew the leases of chats with work, let idle chats go, say we are alive."""
        async with self.claim_lock:
            await self._upkeep_now()

    async def _upkeep_now(self) -> None:
        runner = self.runner
        working = [key for key, chat in runner.chats.items()
                   if chat.outstanding or chat.busy or chat.question is not None]
        idle = [key for key in runner.chats if key not in working]
        held = await runner.in_thread(self.queue.renew, self.name, working, self.ttl)
        lost = set(working) - set(held)
        if lost:  # we stalled past the lease: another replica may have taken them
            log.warning("gateway: lost the lease of %d chat(s) while serving them; their "
                        "replies are left to the replica that took them", len(lost))
            self.lost |= lost
        if idle and not runner.stopped:  # (stopping: leave() gives every lease up at the end)
            await runner.in_thread(self.queue.release, self.name, idle)
            for key in idle:
                self.lost.discard(key)
                chat = runner.chats.pop(key)
                if chat.task is not None:
                    chat.task.cancel()  # its agent goes too: the next lease resumes the session
        await runner.in_thread(self.queue.heartbeat, self.name, {
            "pid": os.getpid(), "host": socket.gethostname(),
            "platforms": sorted(set(runner.adapters) - set(runner.failed)),
            "receiving": list(self.receiving), "chats": len(runner.chats),
            "turns_running": sum(chat.busy for chat in runner.chats.values())})

    async def stop_claiming(self) -> None:
        if self.task is not None:
            self.task.cancel()
            await asyncio.gather(self.task, return_exceptions=True)

    async def stop_renewing(self) -> None:
        if self.keeper is not None:
            self.keeper.cancel()
            await asyncio.gather(self.keeper, return_exceptions=True)
        if self._listening is not None:
            await asyncio.gather(self._listening, return_exceptions=True)

    async def stop(self) -> None:
        """After the drain: give up every lease and leave the replica list."""
        await self.stop_claiming()
        await self.stop_renewing()
        try:
            await self.runner.in_thread(self.queue.leave, self.name)
        except Exception as exc:
            log.warning("gateway: could not leave the shared queue cleanly (%s); its leases "
                        "expire in %.0f s", exc, self.ttl)
        self.queue.close()

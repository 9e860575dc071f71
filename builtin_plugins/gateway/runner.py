"""The gateway runner: receives each platform's messages, applies ``pre_gateway_dispatch``
and access control, answers chat commands, and queues the rest per chat (one turn at a time
per chat, chats in parallel on a bounded pool of worker threads). Queued messages are kept
in the durable inbox until answered, and a restarted gateway answers what is left there."""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import threading
import time
from collections.abc import Callable, Coroutine, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, TypeVar

from hermes_agent.api import (GATEWAY, InboundMessage, PlatformAdapter, SharedQueueStore,
                              session_store)
from hermes_agent.kits.sql.values import clean_text
from hermes_agent.kits.chat_text import split_message

from .access import AccessPolicy, RefusalLimiter
from .chat import Chat, ChatWorker, Queued
from .chatmap import ChatMap, session_key
from .control import start_control
from .delivery import control_answer
from .inbox import Inbox
from .questions import answers_question
from .shared import Replica, SharedChatMap
from .state import StateFile

if TYPE_CHECKING:
    from hermes_agent import Kernel

log = logging.getLogger("hermes_agent.gateway")
T = TypeVar("T")
REFUSAL = ("Sorry, you are not allowed to use this agent. Ask its owner to add your user id "
           "({user_id}) to platforms.{platform}.allowed_users.")
SEND_ATTEMPTS, MAX_RETRY_WAIT = 3, 30.0
STATE_EVERY = 0.25  # seconds between rewrites of state.json at most
BUSY = "Too many messages are waiting in this chat; try again once it has answered."
ELSEWHERE = "Another gateway replica is still answering this conversation; try again later."


class GatewayRunner:
    """``adapters``: platform name -> adapter; ``entries``: the platforms' registry entries."""

    def __init__(self, kernel: Kernel, adapters: Mapping[str, PlatformAdapter], *,
                 entries: Mapping[str, Any] | None = None, env: Mapping[str, str] | None = None,
                 max_workers: int | None = None, max_queue: int | None = None):
        self.kernel = kernel
        self.adapters = dict(adapters)
        self.live: dict[str, PlatformAdapter] = {}  # the connected ones (ctx.get_platform_adapter)
        env = env if env is not None else kernel.env
        config = kernel.config
        self.entries = dict(entries or {})
        self.policies = {name: AccessPolicy(name, config.get(f"platforms.{name}") or {}, env,
                                            self.entries.get(name))
                         for name in self.adapters}
        self.refusals = RefusalLimiter()
        for name, policy in self.policies.items():
            if (warning := policy.warning(name)) is not None:
                log.warning("gateway: %s", warning)
        workers = max_workers or int(config.get("gateway.max_concurrent_turns", 256))
        self.max_queue = max_queue or int(config.get("gateway.max_queue_per_chat", 20))
        self.executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="gateway-turn")
        self.replica = self._replica(kernel)  # one of several gateways on a shared queue
        self.chatmap = SharedChatMap(self.replica.queue) if self.replica else ChatMap(kernel.home)
        self.inbox = Inbox(kernel.home)
        self.state = StateFile(kernel.home)
        self.loop: asyncio.AbstractEventLoop | None = None
        self.chats: dict[str, Chat] = {}
        self.worker = ChatWorker(self)
        self.accepting = self.stopped = self.cutting_short = self.closed = False
        self.started_at = time.time()
        self._state_due: asyncio.TimerHandle | None = None
        self._state_lock, self._state_seq, self._state_written = threading.Lock(), 0, 0
        self.failed: dict[str, str] = {}  # platforms that stopped for good: why
        self.control: Any = None  # the control socket's server (.control), once started
        self.workers: Any = None  # gateway.workers: the worker processes (.workers), once started

    def _replica(self, kernel: Kernel) -> Replica | None:
        """A replica's part when the session store shares a queue (the postgres store)."""
        if not kernel.config.get("gateway.shared_queue", True):
            return None
        try:
            store = session_store(kernel)
        except Exception as exc:  # no store selected: the local inbox, and the error later
            log.debug("gateway: no session store for a shared queue: %s", exc)
            return None
        return Replica(self, store.gateway_queue()) if isinstance(store, SharedQueueStore) \
            else None

    # --- lifecycle ---------------------------------------------------------------------------
    async def start(self) -> list[str]:
        """Connect every adapter, then queue again what an earlier run accepted and did not
        answer; returns the platforms that connected."""
        self.loop = asyncio.get_running_loop()
        self.kernel.service(GATEWAY).runner = self
        count = int(self.kernel.config.get("gateway.workers", 0) or 0)
        if count > 0:  # turns in worker processes (each boots its kernel meanwhile)
            from .workers import WorkerPool

            self.workers = await self.in_thread(WorkerPool, self.kernel, count)
            await self.in_thread(self.workers.wait_ready)
        if self.replica is not None:
            self.replica.prepare(self.adapters)
        connected = []
        for name, adapter in list(self.adapters.items()):
            if not getattr(adapter, "name", ""):
                try:
                    adapter.name = name
                except AttributeError:  # a read-only ``name`` property of its own
                    pass
            entry_limit = getattr(self.entries.get(name), "max_message_length", 0)
            if entry_limit and not getattr(adapter, "max_message_length", 0):
                try:  # registered with register_platform(..., max_message_length=N)
                    adapter.max_message_length = int(entry_limit)
                except (AttributeError, TypeError, ValueError):
                    pass
            adapter.set_handler(functools.partial(self.dispatch, name))
            adapter.set_fatal_handler(functools.partial(self.platform_failed, name))
            if hasattr(adapter, "set_access_check"):
                adapter.set_access_check(self.policies[name].allows)
            try:
                ok = await adapter.connect()
            except Exception as exc:
                log.error("gateway: platform %s failed to connect: %s", name, exc)
                ok = False
            if ok:
                connected.append(name)
                self.live[name] = adapter  # ctx.get_platform_adapter
            else:
                del self.adapters[name]
        self.accepting = True
        self._requeue()
        self.control = await start_control(  # hermes send / cron in other processes
            self, functools.partial(control_answer, self))
        if self.replica is not None:
            self.replica.start()
        self._flush_state()
        return connected

    def _requeue(self) -> None:
        resumed = 0
        for inbox_id, key, message in self.inbox.pending():
            if message.platform not in self.adapters:
                continue  # kept until that platform runs again
            if not self.still_allowed(message, inbox_id):
                self.inbox_done(inbox_id)
                continue
            chat = self._chat(message)
            if chat.key != key:
                log.warning("gateway: inbox message %s belongs to %s, not %s", inbox_id, key,
                            chat.key)
            chat.put(Queued(inbox_id, message, replayed=True))
            resumed += 1
        if resumed:
            log.info("gateway: answering %d message(s) accepted before the last stop", resumed)

    def still_allowed(self, message: InboundMessage, inbox_id: int) -> bool:
        """Whether a message accepted earlier (by an earlier run, or another replica) may
        still be answered: its sender may have been taken off the allow-list since."""
        policy = self.policies.get(message.platform)
        if policy is None or policy.allows(message.user_id, message.user_name):
            return True
        log.warning("gateway: dropped queued message %s of user %s on %s: no longer allowed",
                    inbox_id, message.user_id, message.platform)
        return False

    def platform_failed(self, name: str, reason: str) -> None:
        """An adapter stopped for good: no longer live; status shows why."""
        log.error("gateway: platform %s stopped: %s", name, reason)
        self.failed[name] = reason
        self.live.pop(name, None)
        self.write_state()

    def inbox_done(self, *ids: int) -> None:
        self.inbox.done(*(i for i in ids if i))

    async def finish_message(self, queued: Queued) -> None:
        """The message was answered (or dropped by /stop): out of its queue for good."""
        if queued.shared and self.replica is not None:
            await self.replica.done(queued.inbox_id)
        else:
            self.inbox_done(queued.inbox_id)

    async def stop(self, timeout: float = 60.0) -> None:
        """Accept nothing more, let every accepted message finish (up to ``timeout``), then
        end the chats' sessions and disconnect. A second call does nothing."""
        if self.stopped:
            return
        self.stopped, self.accepting = True, False
        if self.replica is not None:  # no new claims; accepted messages go to the others
            await self.replica.stop_claiming()
        if not await self._drain(timeout):
            log.warning("gateway: turns still running after %ss; interrupting them", timeout)
            self.cutting_short = True  # no new turn starts; what waits stays in the inbox
            for chat in list(self.chats.values()):
                if chat.busy and chat.agent is not None:
                    chat.agent.interrupt()
            await self._drain(min(timeout, 30.0))
        for chat in list(self.chats.values()):
            if chat.task is not None:
                chat.task.cancel()
            if not chat.busy:  # an agent still in its turn is not finalized under it
                await self.worker.finalize(chat)
        if self.control is not None:
            await self.control.close()
        for name, adapter in self.adapters.items():
            self.live.pop(name, None)
            try:
                await adapter.disconnect()
            except Exception as exc:
                log.warning("gateway: %s failed to disconnect: %s", adapter.name, exc)
        if self._state_due is not None:
            self._state_due.cancel()
        if self.replica is not None:
            await self.replica.stop()
        if self.workers is not None:
            await self.in_thread(self.workers.close)
        self.executor.shutdown(wait=True)
        self.closed = True
        self.inbox.close()
        self.kernel.service(GATEWAY).runner = None
        self.state.remove()

    async def _drain(self, timeout: float) -> bool:
        """Wait until every chat's queue is done; False at ``timeout``."""
        pending = [chat.queue.join() for chat in self.chats.values()]
        try:
            await asyncio.wait_for(asyncio.gather(*pending), timeout)
        except asyncio.TimeoutError:
            return False
        return True

    async def in_thread(self, fn: Callable[..., T], *args: Any) -> T:
        return await asyncio.get_running_loop().run_in_executor(self.executor, fn, *args)

    # --- inbound -----------------------------------------------------------------------------
    async def dispatch(self, platform: str, message: InboundMessage,
                       decided: Callable[[str], None] | None = None) -> str:
        """Everything an adapter receives comes through here. Returns what became of the
        message: ``queued`` (durably, when it returns; while the gateway stops, for its next
        start), ``answered`` (a command or the answer to a question), ``skipped`` (by a
        plugin), ``refused``, ``busy`` or ``closed`` (stopping, and the platform keeps no
        inbox). ``decided(outcome)`` is called as soon as that is known, before what the
        gateway says back to the chat (a refusal, a command's answer) is sent: a platform
        that acknowledges its sender (the webhook's 202) answers then, without waiting on
        the replies. With ``decided`` the "busy" text is not sent: the platform tells its
        sender itself (a 429)."""
        message.platform = message.platform or platform
        message.text = clean_text(message.text)  # every platform's text: valid UTF-8 from here on
        outcome, then = await self._route(platform, message)
        if decided is not None:
            decided(outcome)
            if outcome == "busy" and then is not None:
                then.close()
                then = None
        if then is not None:
            await then
        return outcome

    async def _route(self, platform: str,
                     message: InboundMessage) -> tuple[str, Coroutine[Any, Any, Any] | None]:
        """What becomes of ``message`` and, when something is to be said to the chat, the
        coroutine that says it (not started yet)."""
        durable = getattr(self.adapters[platform], "durable_inbox", True)
        if self.closed or (not self.accepting and not durable):
            return "closed", None
        directive = self.kernel.hooks.fire("pre_gateway_dispatch", event=message, gateway=self,
                                           session_store=self.chatmap)
        if isinstance(directive, dict) and directive.get("action") == "skip":
            log.info("gateway: a plugin skipped a message from %s: %s", message.user_id,
                     directive.get("reason", ""))
            return "skipped", None
        if isinstance(directive, dict) and directive.get("action") == "rewrite":
            message.text = clean_text(str(directive.get("text", "")))
        policy = self.policies.get(platform)
        if policy is None or not policy.allows(message.user_id, message.user_name):
            if self.refusals.due(platform, message.chat_id, message.user_id):
                log.warning("gateway: refused user %s on %s", message.user_id, platform)
                return "refused", self._send(self.adapters[platform], message.chat_id,
                                             REFUSAL.format(user_id=message.user_id,
                                                            platform=platform),
                                             None, _meta(message))
            return "refused", None
        await self._fetch_images(platform, message)
        if not self.accepting:  # stopping: answers a running turn's question, else is kept
            known = self.chats.get(session_key(message))  # for the next start to answer
            if known is not None and answers_question(known, message.user_id, message.text):
                return "answered", None
            if self.replica is not None:  # another replica answers it
                await self.replica.accept(session_key(message), message)
            else:
                self.inbox.accept(session_key(message), message)
            return "queued", None
        chat = self._chat(message)
        if answers_question(chat, message.user_id, message.text):
            return "answered", None
        command = message.text.strip().split(maxsplit=1)[0].lower() if message.text.strip() else ""
        if command == "/stop":
            return "answered", self._stop_turn(chat)
        if command == "/status":
            return "answered", self.reply(chat, self._status(chat))
        if self.replica is not None and durable:  # whichever replica serves the chat runs it
            await self.replica.accept(chat.key, message)
            return "queued", None
        if self.replica is not None:  # answered here, while no other replica runs the chat
            if not await self.replica.hold(chat.key):
                return "busy", self.reply(chat, ELSEWHERE)
            chat = self._chat(message)  # (an upkeep may have let the idle one go meanwhile)
            chat.put(Queued(0, message))
            self.write_state()
            return "queued", None
        if chat.queue.qsize() >= self.max_queue:
            return "busy", self.reply(chat, BUSY)
        inbox_id = self.inbox.accept(chat.key, message) if durable else 0
        chat.put(Queued(inbox_id, message))
        self.write_state()
        return "queued", None

    async def _fetch_images(self, platform: str, message: InboundMessage) -> None:
        """The images of an allowed sender's message, downloaded by its platform
        (docs/vision.md); a failure costs the images only."""
        adapter = self.adapters[platform]
        if not isinstance(adapter, PlatformAdapter):
            return
        try:
            await adapter.fetch_images(message)
        except Exception as exc:  # noqa: BLE001 - the text still goes to the agent
            log.warning("gateway: %s could not fetch a message's images: %s", platform, exc)

    def _chat(self, message: InboundMessage) -> Chat:
        key = session_key(message)
        chat = self.chats.get(key)
        if chat is None:
            chat = Chat(key, message.platform, message.chat_id, message.thread_id,
                        asyncio.Queue())
            chat.task = asyncio.get_running_loop().create_task(self.worker.run(chat))
            self.chats[key] = chat
        return chat

    async def forget(self, chat: Chat) -> None:
        """A chat that ended with its turn (``keeps_chat`` false): out of the chats, its agent
        finalized and its line in the chat map gone (the session stays in the store)."""
        if self.stopped:  # stop() finalizes every chat it finds, this one included
            return
        if self.chats.get(chat.key) is chat:
            del self.chats[chat.key]  # a message for the same key now makes a new chat
        await self.worker.finalize(chat)
        await self.in_thread(self.chatmap.discard, chat.key)
        self.write_state()

    async def _stop_turn(self, chat: Chat) -> None:
        dropped = 0
        while not chat.queue.empty():  # waiting messages are dropped with the running turn
            await self.finish_message(chat.queue.get_nowait())
            chat.outstanding -= 1
            chat.queue.task_done()
            dropped += 1
        chat.close_question()  # the turn stops waiting for it (an approval is denied)
        if chat.busy and chat.agent is not None:
            chat.agent.interrupt()
            await self.reply(chat, "Stopping the current turn." + (
                f" Dropped {dropped} waiting message(s)." if dropped else ""))
        else:
            await self.reply(chat, "Nothing is running.")

    def _status(self, chat: Chat) -> str:
        agent = chat.agent
        session = agent.session_id if agent is not None else self.chatmap.get(chat.key)
        return (f"Session: {session or '(new)'}\nModel: {agent.model if agent else '-'}\n"
                f"Running: {'yes' if chat.busy else 'no'}; waiting: {chat.queue.qsize()}; "
                f"turns since start: {chat.turns}")

    # --- outbound ----------------------------------------------------------------------------
    async def reply(self, chat: Chat, text: str, reply_to: str | None = None,
                    extra: dict[str, Any] | None = None) -> None:
        """``extra``: more ``metadata`` for the adapter's ``send`` (a turn's ``usage``)."""
        adapter = self.adapters[chat.platform]
        limit = getattr(adapter, "max_message_length", 0) or 0
        await self.send_pieces(chat, split_message(adapter.format_message(text), limit),
                               reply_to, extra)

    async def send_pieces(self, chat: Chat, pieces: list[str], reply_to: str | None = None,
                          extra: dict[str, Any] | None = None) -> None:
        """Send formatted pieces in order; stop at the first that fails for good."""
        adapter = self.adapters[chat.platform]
        metadata = {**chat.metadata, **extra} if extra else chat.metadata
        for index, piece in enumerate(pieces):
            result = await self._send(adapter, chat.chat_id, piece,
                                      reply_to if index == 0 else None, metadata)
            if not getattr(result, "success", True):
                log.warning("gateway: sending to %s failed: %s", chat.key,
                            getattr(result, "error", ""))
                break

    async def _send(self, adapter: PlatformAdapter, chat_id: str, piece: str,
                    reply_to: str | None, metadata: dict[str, Any]) -> Any:
        """Send, retrying what the adapter marks ``retryable`` (it was not delivered, so a
        retry cannot duplicate it), after its ``retry_after`` or a short backoff."""
        for attempt in range(SEND_ATTEMPTS):
            result = await adapter.send(chat_id, piece, reply_to, metadata)
            if getattr(result, "success", True) or not getattr(result, "retryable", False):
                return result
            if attempt + 1 < SEND_ATTEMPTS:
                wait = getattr(result, "retry_after", None) or 2.0 ** attempt
                await asyncio.sleep(min(float(wait), MAX_RETRY_WAIT))
        return result

    async def deliver(self, platform: str, chat_id: str, text: str,
                      thread_id: str | None = None) -> dict[str, Any]:
        """Send ``text`` to a chat outside any turn (``send_message``, ``hermes send``, cron
        delivery; the target was checked by :mod:`.delivery`): formatted and split as a
        reply, retried as one."""
        adapter = self.live.get(platform)
        if adapter is None:
            return {"success": False, "error": (
                f"{platform} is not connected in the running gateway (connected: "
                f"{', '.join(sorted(self.live)) or 'none'}); enable it and restart the gateway")}
        limit = getattr(adapter, "max_message_length", 0) or 0
        metadata = {"thread_id": thread_id} if thread_id else {}
        ids: list[str | None] = []
        for piece in split_message(adapter.format_message(text), limit):
            result = await self._send(adapter, chat_id, piece, None, metadata)
            if not getattr(result, "success", True):
                return {"success": False, "pieces_sent": len(ids), "error": str(
                    getattr(result, "error", None) or f"{platform} did not take the message")}
            ids.append(getattr(result, "message_id", None))
        return {"success": True, "message_id": ids[0] if ids else None, "pieces": len(ids)}

    # --- state ---------------------------------------------------------------------------
    def write_state(self) -> None:
        """Have state.json rewritten soon: at most every ``STATE_EVERY`` seconds, in a worker
        thread, so a busy gateway's loop never waits on the disk."""
        if self._state_due is not None or self.loop is None:
            return
        self._state_due = self.loop.call_later(STATE_EVERY, self._flush_state)

    def _flush_state(self) -> None:
        self._state_due = None
        snapshot = {
            "pid": os.getpid(), "started_at": self.started_at,
            "platforms": sorted(set(self.adapters) - set(self.failed)),
            "failed_platforms": dict(self.failed), "chats": len(self.chats),
            "turns_running": sum(chat.busy for chat in self.chats.values()),
            "queue_depth": sum(chat.queue.qsize() for chat in self.chats.values()),
            "control": str(self.control.path) if self.control is not None else None,
            "workers": self.workers.pids if self.workers is not None else [],
        }
        if self.accepting:
            self._state_seq += 1
            self.executor.submit(self._write_state, self._state_seq, snapshot)

    def _write_state(self, seq: int, snapshot: dict[str, Any]) -> None:
        """Writes run in worker threads: an older snapshot never replaces a newer one."""
        with self._state_lock:
            if seq > self._state_written:
                self.state.write(snapshot)
                self._state_written = seq


def _meta(message: InboundMessage) -> dict[str, Any]:
    return {"thread_id": message.thread_id} if message.thread_id else {}

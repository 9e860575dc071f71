"""One chat: its queue of messages, its agent (one session, resumed across restarts) and the
task that runs its turns one at a time. Agents run in the runner's worker threads.

Before each turn the session is checked against the model's window: at
``gateway.session_hygiene`` of it (default 0.85) the conversation is compressed first, so a
chat that grew overnight does not fail its next request. The platform's typing indicator
is refreshed while the turn runs."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from hermes_agent.api import (AGENT, AgentSession, AgentTurn, InboundMessage, PlatformAdapter,
                              ReplyStream)
from hermes_agent.kits.chat_text import EditedReply

from .media import TurnMedia, deliver
from .questions import ChatQuestions, Question

if TYPE_CHECKING:
    from hermes_agent import Kernel

log = logging.getLogger("hermes_agent.gateway")
T = TypeVar("T")
TYPING_EVERY = 4.0  # seconds; platforms drop the indicator after about 5


@dataclass
class Queued:
    inbox_id: int  # 0: not in the durable inbox
    message: InboundMessage
    replayed: bool = False  # accepted by an earlier gateway run that stopped before answering
    shared: bool = False  # from the replicas' shared queue (else the local inbox)


@dataclass
class Chat:
    key: str
    platform: str
    chat_id: str
    thread_id: str | None
    queue: asyncio.Queue[Queued]
    agent: AgentSession | None = None
    busy: bool = False
    turns: int = 0
    task: asyncio.Task[None] | None = field(default=None, repr=False)
    asker: str = ""  # the user whose message the running turn answers
    question: Question | None = field(default=None, repr=False)
    mapped_session: str | None = None  # the session the chat map holds for this chat
    outstanding: int = 0  # messages queued or in their turn, not finished yet

    def close_question(self) -> None:
        """End the open question, if any: a later message is a message of its own."""
        question, self.question = self.question, None
        if question is not None:
            question.close()

    def put(self, queued: Queued) -> None:
        self.outstanding += 1
        self.queue.put_nowait(queued)

    @property
    def metadata(self) -> dict[str, Any]:
        return {"thread_id": self.thread_id} if self.thread_id else {}


def _last_user_text(history: list[dict[str, Any]]) -> str | None:
    for entry in reversed(history):
        if entry.get("role") == "user":
            content = entry.get("content")
            if isinstance(content, list):  # text and images: its text
                return "\n".join(str(p.get("text", "")) for p in content
                                 if isinstance(p, dict) and p.get("type") == "text")
            return content if isinstance(content, str) else None
    return None


def _content(message: InboundMessage) -> str | list[dict[str, Any]]:
    """What the agent gets: the text, or text and image parts (docs/vision.md)."""
    if not message.images:
        return message.text
    text = [{"type": "text", "text": message.text}] if message.text else []
    return [*text, *message.images]


def _usage(result: AgentTurn) -> dict[str, int]:
    """The turn's token counts (every model call of it), in OpenAI's names."""
    prompt, completion = result.usage.prompt_tokens, result.usage.output_tokens
    return {"prompt_tokens": prompt, "completion_tokens": completion,
            "total_tokens": prompt + completion}


class Pump:
    """Carries the agent's text deltas (worker thread) to a reply stream (the loop), in
    order; a failing stream stops receiving but never fails the turn."""

    def __init__(self, stream: ReplyStream | None):
        self.stream = stream
        self.queue: asyncio.Queue[str | None] | None = asyncio.Queue() if stream else None
        self.loop = asyncio.get_running_loop()
        self.task: asyncio.Task[None] | None = None
        self.wrote = False  # text since the last model call ended

    def on_event(self, event: dict[str, Any]) -> None:
        if self.stream is None or self.queue is None:
            return
        kind = event.get("type")
        if kind == "text_delta" and event.get("text"):
            self.loop.call_soon_threadsafe(self.queue.put_nowait, event["text"])
            self.wrote = True
        elif kind == "assistant" and event.get("tool_calls") and self.wrote:
            # text before a tool call, then the answer after it: keep them apart
            self.loop.call_soon_threadsafe(self.queue.put_nowait, "\n\n")
            self.wrote = False

    async def _run(self) -> None:
        assert self.stream is not None and self.queue is not None
        while (text := await self.queue.get()) is not None:
            try:
                await self.stream.push(text)
            except Exception as exc:
                log.warning("gateway: streaming a reply failed: %s", exc)
                self.stream = None
                return

    async def __aenter__(self) -> "Pump":
        if self.stream is not None:
            self.task = self.loop.create_task(self._run())
        return self

    async def __aexit__(self, *exc: Any) -> None:
        if self.task is not None and self.queue is not None:
            self.queue.put_nowait(None)  # after every delta already queued
            await self.task


class TurnReplica(Protocol):
    """What the turns use of the runner's replica (:class:`.shared.Replica`)."""

    wake: asyncio.Event

    def idle(self, chat_key: str) -> None: ...

    def holds(self, chat_key: str) -> bool: ...


class TurnRunner(Protocol):
    """What the turns use of their runner (:class:`.runner.GatewayRunner`, which builds the
    worker and hands itself to it)."""

    kernel: Kernel
    loop: asyncio.AbstractEventLoop | None
    adapters: dict[str, PlatformAdapter]
    chatmap: Any
    cutting_short: bool
    stopped: bool
    workers: Any  # a .workers.WorkerPool with gateway.workers, else None

    @property
    def replica(self) -> TurnReplica | None: ...

    async def in_thread(self, fn: Callable[..., T], *args: Any) -> T: ...

    async def reply(self, chat: Chat, text: str, reply_to: str | None = None,
                    extra: dict[str, Any] | None = None) -> None: ...

    async def send_pieces(self, chat: Chat, pieces: list[str], reply_to: str | None = None,
                          extra: dict[str, Any] | None = None) -> None: ...

    async def finish_message(self, queued: Queued) -> None: ...

    async def forget(self, chat: Chat) -> None: ...

    def write_state(self) -> None: ...


class ChatWorker:
    """Runs the turns of every chat for a runner."""

    def __init__(self, runner: TurnRunner):
        self.runner = runner

    async def run(self, chat: Chat) -> None:
        while True:
            queued = await chat.queue.get()
            answered = False  # cancelled, or cut short by shutdown: kept for the next start
            try:
                answered = await self.turn(chat, queued.message, replayed=queued.replayed)
            except Exception:  # one failed turn must not end the chat
                log.exception("gateway: a turn in %s failed", chat.key)
                await self.runner.reply(chat, "Sorry, that turn failed; see the gateway log.")
                answered = True
            finally:
                if answered:
                    await self.runner.finish_message(queued)
                chat.outstanding -= 1
                if self.runner.replica is not None:  # room for another chat: claim now
                    self.runner.replica.wake.set()
                    if not chat.outstanding:
                        self.runner.replica.idle(chat.key)
                chat.queue.task_done()
                self.runner.write_state()
            adapter = self.runner.adapters.get(chat.platform)
            if not chat.outstanding and not getattr(adapter, "keeps_chat", bool)(chat.chat_id):
                await self.runner.forget(chat)
                return

    async def agent(self, chat: Chat, message: InboundMessage) -> AgentSession:
        if chat.agent is None:
            chat.agent = await self.runner.in_thread(self._create, chat, message)
        return chat.agent

    def _create(self, chat: Chat, message: InboundMessage) -> AgentSession:
        """The chat's agent, through the agent service (the same agent as ``hermes chat``),
        continuing the chat's stored session when there is one."""
        runner = self.runner
        questions = ChatQuestions(runner, chat, runner.loop)
        agent: AgentSession
        if runner.workers is not None:  # gateway.workers: the agent lives in a worker process
            from .workers import RemoteAgent

            agent = RemoteAgent(runner.workers, chat.key, approval=questions.approval,
                                clarify=questions.clarify, platform=message.platform,
                                sender_id=message.user_id, chat_id=message.chat_id)
        else:
            agent = runner.kernel.service(AGENT).create(
                platform=message.platform, sender_id=message.user_id, chat_id=message.chat_id,
                approval_callback=questions.approval, clarify_callback=questions.clarify)
        known = chat.mapped_session = runner.chatmap.get(chat.key)
        if known is not None:
            try:
                agent.resume(known)
            except Exception as exc:  # the session was deleted or the store changed
                log.warning("gateway: %s starts a new session: %s", chat.key, exc)
        return agent

    async def turn(self, chat: Chat, message: InboundMessage, replayed: bool = False) -> bool:
        """Answer one message; False when shutdown cut the turn short (not answered: the
        message stays in the inbox and the next start runs it again)."""
        if self.runner.cutting_short:  # shutdown gave up waiting: the next start runs it
            return False
        if message.text.startswith("/") and await self.command(chat, message):
            return True
        agent = await self.agent(chat, message)
        # The chat's session is known before the turn, so a gateway killed mid-turn resumes it;
        # a replayed turn drops what its first, cut-short run stored of it.
        await self.remember_session(chat, agent)
        if replayed and _last_user_text(agent.history) == message.text:
            await self.runner.in_thread(agent.rewind, 1)
        chat.busy, chat.asker = True, message.user_id
        self.runner.write_state()
        stream = self.open_stream(chat, message)
        media = TurnMedia()  # the files the turn's tools made, sent after the reply
        try:
            async with self.typing(chat), Pump(stream) as pump:
                def on_event(event: dict[str, Any]) -> None:
                    media.on_event(event)
                    pump.on_event(event)

                result = await self.runner.in_thread(functools.partial(
                    self._run_turn, chat, agent, _content(message), on_event,
                    self._untrusted_source(message)))
        finally:
            chat.busy = False
            chat.turns += 1
            chat.close_question()  # asked by this turn: nobody waits for its answer any more
        if agent.session_stored:
            await self.remember_session(chat, agent)
        if result.interrupted and self.runner.stopped:
            log.info("gateway: the turn in %s was cut short by shutdown; the next start runs "
                     "it again", chat.key)
            return False
        if result.interrupted:
            text = result.final_response or "Stopped."
        elif result.failed:
            text = f"Sorry, the model request failed: {result.error}"
        else:
            text = result.final_response or "(no answer)"
        replica = self.runner.replica
        if replica is not None and not replica.holds(chat.key):
            log.warning("gateway: %s moved to another replica during this turn; it answers",
                        chat.key)
            return False
        text, files = media.take(text, self.runner.adapters[chat.platform])
        usage = _usage(result)  # the turn's tokens, for a platform that reports them
        if stream is not None:
            stream.usage = usage
        left = await stream.finish(text or "(attached)") if stream is not None else None
        if left is None and (text or not files):
            wants = getattr(self.runner.adapters[chat.platform], "reports_usage", False)
            await self.runner.reply(chat, text or "(no answer)", reply_to=message.message_id,
                                    extra={"usage": usage} if wants else None)
        elif left:
            await self.runner.send_pieces(chat, left)
        await deliver(self.runner, chat, message, text, files)
        return True

    async def remember_session(self, chat: Chat, agent: AgentSession) -> None:
        """Map the chat to its session (a durable write, in a worker thread, when it changed)."""
        if chat.mapped_session != agent.session_id:
            await self.runner.in_thread(self.runner.chatmap.set, chat.key, agent.session_id)
            chat.mapped_session = agent.session_id

    def open_stream(self, chat: Chat, message: InboundMessage) -> ReplyStream | None:
        if not self.runner.kernel.config.get("gateway.stream_replies", True):
            return None
        adapter = self.runner.adapters[chat.platform]
        try:
            stream = adapter.open_stream(chat.chat_id, message.message_id, chat.metadata)
        except Exception as exc:  # a broken stream only costs the live preview
            log.warning("gateway: %s cannot stream replies: %s", chat.platform, exc)
            return None
        if (stream is None and adapter.supports_streaming
                and type(adapter).open_stream is PlatformAdapter.open_stream):
            return EditedReply(adapter, chat.chat_id, message.message_id, chat.metadata)
        return stream

    def _untrusted_source(self, message: InboundMessage) -> str | None:
        policy = self.runner.policies.get(message.platform)
        if policy is None:
            return None
        return policy.untrusted_source(message.platform, message.user_id, message.user_name)

    def _run_turn(self, chat: Chat, agent: AgentSession, text: str | list[dict[str, Any]],
                  on_event: Callable[[dict[str, Any]], None],
                  source: str | None = None) -> AgentTurn:
        """The turn, in a worker thread: session hygiene first, then the agent's turn (one
        hop from the loop for both, and the window estimate off the loop). ``source``: the
        sender is not the owner's (:meth:`AccessPolicy.untrusted_source`)."""
        self.hygiene(chat, agent)
        if source is None:
            return agent.run_conversation(text, on_event=on_event)
        return agent.run_conversation(text, on_event=on_event, source=source)

    def hygiene(self, chat: Chat, agent: AgentSession) -> None:
        """Compress the session first when it fills ``gateway.session_hygiene`` of the window."""
        threshold = float(self.runner.kernel.config.get("gateway.session_hygiene", 0.85) or 0)
        if threshold <= 0 or not 0 < threshold <= 1:
            return
        fill = agent.context_fill()  # an estimate (no I/O); this chat's agent is idle
        if fill >= threshold:
            log.info("gateway: %s fills %.0f%% of the window; compressing before the turn",
                     chat.key, fill * 100)
            agent.compress()

    @contextlib.asynccontextmanager
    async def typing(self, chat: Chat) -> AsyncIterator[None]:
        """The typing indicator, refreshed every few seconds until the block ends (nothing
        for a platform that keeps the base class's no-op ``send_typing``)."""
        adapter = self.runner.adapters[chat.platform]
        if type(adapter).send_typing is PlatformAdapter.send_typing:
            yield
            return

        async def refresh() -> None:
            while True:
                try:
                    await adapter.send_typing(chat.chat_id, chat.metadata)
                except Exception as exc:  # cosmetic: never fails the turn
                    log.debug("gateway: typing indicator for %s failed: %s", chat.key, exc)
                await asyncio.sleep(TYPING_EVERY)

        task = asyncio.get_running_loop().create_task(refresh())
        try:
            yield
        finally:
            task.cancel()
            with contextlib.suppress(Exception):
                await adapter.stop_typing(chat.chat_id, chat.metadata)

    async def command(self, chat: Chat, message: InboundMessage) -> bool:
        """``/new``, ``/reset`` and the plugins' slash commands, in order with the chat's
        messages; False for text that only looks like a command (``/etc/hosts?``)."""
        name, _, args = message.text[1:].partition(" ")
        name = name.lower()
        if name in ("new", "reset"):
            agent = await self.agent(chat, message)
            await self.runner.in_thread(agent.new_session, name)
            await self.runner.in_thread(self.runner.chatmap.discard, chat.key)
            chat.mapped_session = None
            await self.runner.reply(chat, "Started a new conversation.")
            return True
        command = self.runner.kernel.registered("slash_command").get(name)
        if command is None:
            return False
        try:
            result = await self.runner.in_thread(command.handler, args)
            if inspect.isawaitable(result):
                result = await result
        except Exception as exc:
            result = f"/{name} failed: {type(exc).__name__}: {exc}"
        await self.runner.reply(chat, result if isinstance(result, str) and result else "Done.")
        return True

    async def finalize(self, chat: Chat) -> None:
        if chat.agent is not None:
            await self.runner.in_thread(chat.agent.finalize, "shutdown")

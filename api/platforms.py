"""The platform SDK: what a platform plugin (Telegram, Discord, a webhook, ...) implements and
what the gateway hands it. A plugin registers its adapter with ``ctx.register_platform(name,
label, adapter_factory, check_fn, **entry)``; the gateway calls ``adapter_factory(config)``
with the ``platforms.<name>`` section of config.yaml (a dict) and drives the adapter below.
docs/gateway.md walks through writing one."""

from __future__ import annotations

import abc
import asyncio
import logging
import re
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass
class InboundMessage:
    """One message a platform received. ``chat_type``: ``"dm"``, ``"group"``, ``"channel"``
    or ``"thread"``; ``raw``: the platform's own payload, untouched."""

    platform: str
    chat_id: str
    user_id: str
    text: str
    user_name: str = ""
    thread_id: str | None = None
    message_id: str | None = None
    chat_type: str = "dm"
    raw: Any = None


@dataclass
class SendResult:
    """What ``send`` reports: ``success``, the platform's ``message_id``, or an ``error``;
    ``retryable`` marks a transient failure (``retry_after`` seconds, when the platform says)."""

    success: bool
    message_id: str | None = None
    error: str | None = None
    retryable: bool = False
    retry_after: float | None = None
    raw: Any = None


@dataclass
class ChatInfo:
    """What ``get_chat_info`` returns; it also reads like the original's dict (``info["name"]``)."""

    name: str
    type: str = "dm"
    extra: dict[str, Any] = field(default_factory=dict)

    def __getitem__(self, key: str) -> Any:
        return getattr(self, key) if key in ("name", "type") else self.extra[key]

    def get(self, key: str, default: Any = None) -> Any:
        try:
            return self[key]
        except KeyError:
            return default


class PlatformConfig(dict):  # type: ignore[type-arg]
    """The ``platforms.<name>`` section of config.yaml as the adapter factory gets it: a dict
    that also reads by attribute (``cfg.token``, ``cfg.extra``), like the original's."""

    def __getattr__(self, key: str) -> Any:
        if key == "extra":
            return self.get("extra") or {}
        return self.get(key)


def platform_setting(config: Mapping[str, Any], env: Mapping[str, str], name: str,
                     env_name: str | None = None, default: Any = None) -> Any:
    """A platform setting: ``platforms.<name>.<name>`` in config.yaml, else its ``extra``
    (where 0.19 kept plugin settings), else the environment variable ``env_name``, else
    ``default``; empty values count as unset."""
    extra = config.get("extra") if isinstance(config.get("extra"), Mapping) else {}
    values = (config.get(name), extra.get(name), env.get(env_name) if env_name else None)
    return next((value for value in values if value not in (None, "")), default)


def config_secret(config: Mapping[str, Any], *names: str) -> str | None:
    """The first of ``names`` set in the platform's config.yaml section (or its ``extra``):
    a secret there is refused, since secrets belong in the environment or ``.env``."""
    extra = config.get("extra") if isinstance(config.get("extra"), Mapping) else {}
    return next((name for name in names if config.get(name) or extra.get(name)), None)


def http_url(host: str, port: int, path: str = "") -> str:
    """``http://host:port/path``, an IPv6 host in brackets."""
    return f"http://{f'[{host}]' if ':' in host else host}:{port}{path}"


def id_set(value: Any) -> frozenset[str]:
    """Ids from a YAML list or a comma-separated string (``allowed_chats: 1,2``)."""
    if value in (None, ""):
        return frozenset()
    items = value if isinstance(value, (list, tuple, set, frozenset)) else str(value).split(",")
    return frozenset(str(item).strip() for item in items if str(item).strip())


#: The gateway's entry point for inbound messages; adapters await it (see ``set_handler``).
#: It returns what became of the message (see :meth:`PlatformAdapter.handle_message`).
MessageHandler = Callable[[InboundMessage], Awaitable[Any]]


class PlatformAdapter(abc.ABC):
    """The base of every platform adapter. Subclasses implement ``connect``, ``disconnect`` and
    ``send``, and call ``await self.handle_message(msg)`` for each message they receive.

    Built as ``Adapter(config)`` or, like the original's ``BasePlatformAdapter``,
    ``Adapter(config, platform)``. ``max_message_length`` (0: no limit) is where replies are
    split; ``supports_streaming`` says ``edit_message`` may be used to grow a reply in place.
    ``durable_inbox`` (default True) keeps accepted messages in the gateway's inbox until
    answered, so a restarted gateway answers them; a request/response platform whose client
    sees the failure and retries (the api-server) turns it off. ``exclusive_receiver``: see
    :meth:`start_receiving`.
    """

    name: str = ""
    max_message_length: int = 0
    supports_streaming: bool = False
    durable_inbox: bool = True
    #: Only one process may receive this platform's messages at a time (Telegram's long
    #: polling). With several gateway replicas the gateway sets ``receive_on_connect`` to
    #: False before ``connect`` and calls :meth:`start_receiving` on the one it elects.
    exclusive_receiver: bool = False
    receive_on_connect: bool = True
    #: Where a platform that serves HTTP listens, once connected (the bound port, also when
    #: port 0 was asked for); ``hermes gateway run`` prints it. None: no HTTP server.
    listen_url: str | None = None
    #: The turn's final reply carries its token counts (``metadata["usage"]`` in ``send``).
    reports_usage: bool = False

    def __init__(self, config: Any = None, platform: Any = None):
        self.config = config if config is not None else {}
        if platform is not None:
            self.name = str(getattr(platform, "value", platform))
        self._handler: MessageHandler | None = None

    def set_handler(self, handler: MessageHandler) -> None:
        """The gateway installs its dispatcher here before ``connect``."""
        self._handler = handler

    def set_fatal_handler(self, handler: Callable[[str], None]) -> None:
        """The gateway installs what :meth:`report_fatal` calls."""
        self._fatal_handler = handler

    def report_fatal(self, reason: str) -> None:
        """Tell the gateway this platform stopped for good after connecting (a revoked
        token, say): it is dropped from the live platforms and ``hermes gateway status``
        shows ``reason``, which should say what to fix."""
        handler = getattr(self, "_fatal_handler", None)
        if handler is not None:
            handler(reason)

    async def handle_message(self, message: InboundMessage) -> str | None:
        """Hand ``message`` to the gateway. Returns once it is accepted or turned away:
        ``"queued"`` (stored durably: safe to acknowledge to the platform now),
        ``"answered"`` (a chat command, or the answer to a question the agent asked),
        ``"skipped"`` (a plugin dropped it; no reply will come), ``"refused"`` (unknown
        user; the refusal was sent), ``"busy"`` (the chat's queue is full; the sender was
        told) or ``"closed"`` (the gateway is stopping; the message was not accepted)."""
        if self._handler is None:
            raise RuntimeError(f"platform {self.name!r}: handle_message() before the gateway "
                               "installed its handler; start adapters through the gateway")
        return await self._handler(message)

    async def accept_message(self, message: InboundMessage) -> str:
        """Hand ``message`` to the gateway and return as soon as it decided what becomes of
        it (the outcomes of :meth:`handle_message`), without waiting for what the gateway says
        back to the chat (a refusal, a command's answer: they are still sent). For a platform
        that acknowledges its sender: answer it only once this returns ``"queued"`` (the
        message is in the durable inbox). On ``"busy"`` no text goes to the chat: tell the
        sender to retry (an HTTP 429)."""
        if self._handler is None:
            raise RuntimeError(f"platform {self.name!r}: accept_message() before the gateway "
                               "installed its handler; start adapters through the gateway")
        loop = asyncio.get_running_loop()
        outcome: asyncio.Future[str] = loop.create_future()

        def decided(value: str) -> None:
            if not outcome.done():
                outcome.set_result(value)

        def ended(task: asyncio.Task[Any]) -> None:
            self._accepting.discard(task)
            if outcome.done():
                if not task.cancelled() and task.exception() is not None:
                    logging.getLogger("hermes_agent.gateway").error(
                        "%s: after taking a message: %s", self.name, task.exception())
            elif task.cancelled():
                outcome.cancel()
            elif task.exception() is not None:
                outcome.set_exception(task.exception())  # type: ignore[arg-type]
            else:
                outcome.set_result(str(task.result()))

        task = loop.create_task(self._handler(message, decided))  # type: ignore[call-arg]
        if not hasattr(self, "_accepting"):
            self._accepting: set[asyncio.Task[Any]] = set()
        self._accepting.add(task)  # referenced until done (the loop keeps only weak ones)
        task.add_done_callback(ended)
        return await asyncio.shield(outcome)

    @abc.abstractmethod
    async def connect(self, *, is_reconnect: bool = False) -> bool:
        """Open the connection; False when it cannot (the gateway logs and skips it)."""

    @abc.abstractmethod
    async def disconnect(self) -> None:
        """Close the connection; called once at shutdown."""

    @abc.abstractmethod
    async def send(self, chat_id: str, content: str, reply_to: str | None = None,
                   metadata: dict[str, Any] | None = None) -> SendResult:
        """Deliver ``content`` (at most ``max_message_length`` long) to ``chat_id``.
        ``metadata`` may carry ``thread_id``."""

    def keeps_chat(self, chat_id: str) -> bool:
        """False for a chat that ends with its turn (a one-turn chat no client can continue):
        once its messages are answered the gateway forgets it, its agent and its line in the
        chat map (the session stays in the store)."""
        return True

    async def start_receiving(self) -> None:
        """Begin receiving (an ``exclusive_receiver`` connected with ``receive_on_connect``
        False); a no-op for the others."""

    async def send_typing(self, chat_id: str, metadata: dict[str, Any] | None = None) -> None:
        """Show a typing indicator, where the platform has one."""

    async def stop_typing(self, chat_id: str, metadata: dict[str, Any] | None = None) -> None:
        """Hide it again."""

    async def edit_message(self, chat_id: str, message_id: str, content: str,
                           metadata: dict[str, Any] | None = None) -> SendResult:
        return SendResult(False, error=f"platform {self.name!r} cannot edit messages")

    async def get_chat_info(self, chat_id: str) -> ChatInfo | dict[str, Any]:
        return ChatInfo(name=str(chat_id))

    def format_message(self, content: str) -> str:
        """Adapt markdown to the platform (identity by default)."""
        return content

    def open_stream(self, chat_id: str, reply_to: str | None = None,
                    metadata: dict[str, Any] | None = None) -> "ReplyStream | None":
        """A stream that shows the reply while the model writes it, or None (the reply is
        sent whole at the end). By default: a message edited in place as the text grows,
        when ``supports_streaming`` is set (the platform can edit messages)."""
        if not self.supports_streaming:
            return None
        return EditedReply(self, chat_id, reply_to, metadata)

    def truncate_message(self, content: str, max_length: int = 4096,
                         len_fn: Callable[[str], int] | None = None) -> list[str]:
        """The original's name for :func:`split_message`."""
        return split_message(content, max_length, len_fn)


class ReplyStream(abc.ABC):
    """A reply shown while it is written. The gateway calls :meth:`push` with each piece of
    text the model produces (in order, on the gateway's loop), then :meth:`finish` once with
    the whole final reply (which may differ: text before a tool call is not part of it).
    ``usage``: the turn's token counts (``prompt_tokens``, ``completion_tokens``,
    ``total_tokens``), set before :meth:`finish`; an adapter with ``reports_usage = True``
    gets them for a non-streamed reply as the ``usage`` of ``send``'s ``metadata``."""

    usage: dict[str, int] | None = None

    @abc.abstractmethod
    async def push(self, text: str) -> None:
        """More text of the reply."""

    @abc.abstractmethod
    async def finish(self, text: str) -> list[str] | None:
        """Deliver the final reply ``text``. Returns the pieces the gateway must still send
        (already formatted; ``[]``: all delivered), or None when the stream delivered
        nothing (the gateway sends the whole reply as usual)."""


class EditedReply(ReplyStream):
    """The default stream: the first text is sent as a message that is then edited as the
    reply grows (at most every ``interval`` seconds); the final reply replaces it, with any
    part beyond the platform's limit sent as further messages."""

    interval = 1.0

    def __init__(self, adapter: PlatformAdapter, chat_id: str, reply_to: str | None,
                 metadata: dict[str, Any] | None):
        self.adapter, self.chat_id, self.reply_to = adapter, chat_id, reply_to
        self.metadata = metadata or {}
        self.text, self.message_id, self.shown, self.last_edit = "", None, "", 0.0
        self.broken = False  # the platform refused a send or an edit: stop streaming

    async def push(self, text: str) -> None:
        self.text += text
        limit = self.adapter.max_message_length
        if self.broken or not self.text.strip() or (limit and len(self.text) > limit):
            return
        if self.message_id is None:
            await self._show(await self.adapter.send(self.chat_id, self.text, self.reply_to,
                                                     self.metadata))
        elif time.monotonic() - self.last_edit >= self.interval:
            await self._show(await self.adapter.edit_message(self.chat_id, self.message_id,
                                                             self.text, self.metadata))

    async def _show(self, result: SendResult) -> None:
        if not result.success:
            self.broken = True
            return
        self.message_id = self.message_id or result.message_id
        self.shown, self.last_edit = self.text, time.monotonic()
        if self.message_id is None:
            self.broken = True  # sent, but cannot be edited without its id

    async def finish(self, text: str) -> list[str] | None:
        if self.message_id is None:
            return None  # nothing shown yet: a plain send
        formatted = self.adapter.format_message(text)
        pieces = split_message(formatted, self.adapter.max_message_length) or [formatted]
        if pieces[0] != self.shown:
            result = await self.adapter.edit_message(self.chat_id, self.message_id, pieces[0],
                                                     self.metadata)
            if not result.success:  # the streamed text stays; the whole reply follows it
                return pieces
        return pieces[1:]


_FENCE = re.compile(r"^\s*(```|~~~)")


def split_message(text: str, limit: int, len_fn: Callable[[str], int] | None = None) -> list[str]:
    """``text`` in pieces of at most ``limit`` (0: no limit): whole paragraphs and code blocks
    packed together; a longer block is cut at lines, then spaces, and a code block cut in two
    is closed and reopened with its fence."""
    size = len_fn or len
    if limit <= 0 or size(text) <= limit:
        return [text] if text.strip() else []
    pieces: list[str] = []
    current = ""
    for block in _blocks(text):
        joined = f"{current}\n\n{block}" if current else block
        if size(joined) <= limit:
            current = joined
            continue
        if current:
            pieces.append(current)
        current = ""
        parts = _split_block(block, limit, size)
        pieces += parts[:-1]
        current = parts[-1]
    if current:
        pieces.append(current)
    return pieces


def _blocks(text: str) -> list[str]:
    """Paragraphs (split at blank lines) and fenced code blocks (kept whole)."""
    blocks: list[str] = []
    lines: list[str] = []
    fence = ""
    for line in text.splitlines():
        if _FENCE.match(line):
            fence = "" if fence else line.strip()
        if not fence and not line.strip():
            if lines:
                blocks.append("\n".join(lines))
            lines = []
            continue
        lines.append(line)
    if lines:
        blocks.append("\n".join(lines))
    return blocks


def _split_block(block: str, limit: int, size: Callable[[str], int]) -> list[str]:
    lines = block.split("\n")
    opener = lines[0].strip() if _FENCE.match(lines[0]) else ""
    reserve = size("\n```") if opener else 0
    pieces: list[str] = []
    current = ""
    for line in lines:
        while True:
            joined = f"{current}\n{line}" if current else line
            if size(joined) <= limit - reserve:
                current = joined
                break
            if current and current != opener:
                pieces.append(current)
                current, line = (opener if opener else ""), line
                if current:
                    continue
            room = limit - reserve - (size(current) + 1 if current else 0)
            cut = _cut(line, max(1, room), size)
            head = line[:cut].rstrip(" ")
            pieces.append(f"{current}\n{head}" if current else head)
            current, line = opener, line[cut:].lstrip(" ")
            if not line:
                break
    if current and current != opener:
        pieces.append(current)
    if opener:  # close every piece but the last, reopen every piece but the first
        pieces = [p if p.rstrip().endswith(("```", "~~~")) and i == len(pieces) - 1
                  else p + "\n```" for i, p in enumerate(pieces)]
    return pieces


def _cut(line: str, room: int, size: Callable[[str], int]) -> int:
    """Where to cut an overlong line: the last space that fits, else hard at ``room``."""
    end = min(len(line), room)
    while end > 1 and size(line[:end]) > room:
        end -= 1
    space = line.rfind(" ", 0, end + 1)  # a space just past the room may go
    return space if space > end // 2 else end



"""The platform SDK: what a platform plugin (Telegram, Discord, a webhook, ...) implements and
what the gateway hands it. A plugin registers its adapter with ``ctx.register_platform(name,
label, adapter_factory, check_fn, **entry)``; the gateway calls ``adapter_factory(config)``
with the ``platforms.<name>`` section of config.yaml (a dict) and drives the adapter below.
docs/gateway.md walks through writing one."""

from __future__ import annotations

import abc
import re
from collections.abc import Awaitable, Callable
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
    sees the failure and retries (the api-server) turns it off.
    """

    name: str = ""
    max_message_length: int = 0
    supports_streaming: bool = False
    durable_inbox: bool = True

    def __init__(self, config: Any = None, platform: Any = None):
        self.config = config if config is not None else {}
        if platform is not None:
            self.name = str(getattr(platform, "value", platform))
        self._handler: MessageHandler | None = None

    def set_handler(self, handler: MessageHandler) -> None:
        """The gateway installs its dispatcher here before ``connect``."""
        self._handler = handler

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

    def truncate_message(self, content: str, max_length: int = 4096,
                         len_fn: Callable[[str], int] | None = None) -> list[str]:
        """The original's name for :func:`split_message`."""
        return split_message(content, max_length, len_fn)


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



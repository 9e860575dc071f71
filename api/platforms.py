"""The platform SDK: what a platform plugin (Telegram, Discord, a webhook, ...) implements and
what the gateway hands it. A plugin registers its adapter with ``ctx.register_platform(name,
label, adapter_factory, check_fn, **entry)``; the gateway calls ``adapter_factory(config)``
with the ``platforms.<name>`` section of config.yaml (a dict) and drives the adapter below.
docs/gateway.md walks through writing one."""

from __future__ import annotations

import abc
import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass
class InboundMessage:
    """One message a platform received. ``chat_type``: ``"dm"``, ``"group"``, ``"channel"``
    or ``"thread"``; ``raw``: the platform's own payload, untouched; ``images``: the image
    parts it carries (OpenAI ``image_url`` parts with a ``data:`` or http(s) URL; the agent
    stores them, docs/vision.md); ``attachments``: the other files that came with it, already
    downloaded, each a JSON-able dict: ``type`` (``"image"`` or ``"file"``), ``path`` (the
    local copy), ``name``, ``mime_type``, ``size`` (bytes), and described in ``text``."""

    platform: str
    chat_id: str
    user_id: str
    text: str
    user_name: str = ""
    thread_id: str | None = None
    message_id: str | None = None
    chat_type: str = "dm"
    raw: Any = None
    images: list[dict[str, Any]] = field(default_factory=list)
    attachments: list[dict[str, Any]] = field(default_factory=list)
    transcribed: bool = False  # the text is a voice note's transcript (docs/voice.md)


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

    def set_access_check(self, check: Callable[[str, str], bool]) -> None:
        """The gateway installs its allow-list here (see :meth:`may_talk`)."""
        self._access_check = check

    def may_talk(self, user_id: str, user_name: str = "") -> bool:
        """Whether the gateway's allow-list lets this user talk to the agent: a platform that
        fetches what a message carries (its files) asks first, so nothing of a stranger's is
        stored. True before the gateway installed its check; the gateway still checks every
        message itself."""
        check = getattr(self, "_access_check", None)
        return True if check is None else bool(check(str(user_id), user_name))

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

    async def fetch_images(self, message: InboundMessage) -> None:
        """Download the images ``message`` names (from its ``raw`` payload) into
        ``message.images``; the gateway calls it once the sender is allowed, so nobody else
        makes the bot download anything. Nothing by default."""

    def keeps_chat(self, chat_id: str) -> bool:
        """False for a chat that ends with its turn (a one-turn chat no client can continue):
        once its messages are answered the gateway forgets it, its agent and its line in the
        chat map (the session stays in the store)."""
        return True

    async def start_receiving(self) -> None:
        """Begin receiving (an ``exclusive_receiver`` connected with ``receive_on_connect``
        False); a no-op for the others."""

    async def send_media(self, chat_id: str, path: str, kind: str = "file", caption: str = "",
                         reply_to: str | None = None, metadata: Any = None) -> SendResult:
        return SendResult(False, error=f"platform {self.name!r} cannot send files")

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
        """A stream that shows the reply while the model writes it, or None. Left as it is
        (None), the gateway grows the reply in place with ``edit_message`` when
        ``supports_streaming`` is set, else sends it whole at the end."""
        return None


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

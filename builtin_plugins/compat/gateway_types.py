"""The gateway types platform plugins written for Hermes Agent 0.19 import
(``gateway.config``, ``gateway.platforms.base``, ``gateway.session``), mapped onto the platform
SDK of ``hermes_agent.api``: their adapters subclass :class:`BasePlatformAdapter` (a
``PlatformAdapter``), build a :class:`MessageEvent` with ``self.build_source(...)`` and hand it
to ``await self.handle_message(event)``, which passes the gateway an ``InboundMessage``.

Only text reaches the agent: a ``MessageEvent``'s media (``media_urls``) stays in ``raw``."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from enum import Enum
from typing import Any

from hermes_agent.api import InboundMessage, PlatformAdapter
from hermes_agent.api import SendResult as _SendResult
from hermes_agent.kits.chat_text import split_message

log = logging.getLogger("hermes_agent.gateway")


class Platform(Enum):
    """A platform's name; ``Platform("irc")`` names any plugin platform (made once, then the
    same member), as in 0.19."""

    LOCAL = "local"
    TELEGRAM = "telegram"
    DISCORD = "discord"
    WHATSAPP = "whatsapp"
    SLACK = "slack"
    SIGNAL = "signal"
    MATTERMOST = "mattermost"
    MATRIX = "matrix"
    HOMEASSISTANT = "homeassistant"
    EMAIL = "email"
    SMS = "sms"
    API_SERVER = "api_server"
    WEBHOOK = "webhook"

    @classmethod
    def _missing_(cls, value: object) -> "Platform | None":
        if not isinstance(value, str) or not value.strip():
            return None
        name = value.strip().lower()
        if name in cls._value2member_map_:
            return cls._value2member_map_[name]  # type: ignore[return-value]
        member = object.__new__(cls)
        member._value_ = name
        member._name_ = name.upper().replace("-", "_").replace(" ", "_")
        cls._value2member_map_[name] = member
        return member

    # A plugin platform's member is not an attribute of the class, so copies and pickles go
    # through its value (Python 3.11.2 looks members up by name there, and fails).
    def __reduce_ex__(self, protocol: object) -> tuple[type["Platform"], tuple[str]]:
        return type(self), (self._value_,)

    def __copy__(self) -> "Platform":
        return self

    def __deepcopy__(self, memo: object) -> "Platform":
        return self


class MessageType(Enum):
    TEXT = "text"
    LOCATION = "location"
    PHOTO = "photo"
    VIDEO = "video"
    AUDIO = "audio"
    VOICE = "voice"
    DOCUMENT = "document"
    STICKER = "sticker"
    COMMAND = "command"


class ProcessingOutcome(Enum):
    SUCCESS = "success"
    FAILURE = "failure"
    CANCELLED = "cancelled"


@dataclass
class SessionSource:
    """Where a message came from (what ``build_source`` returns)."""

    platform: Any
    chat_id: str
    chat_name: str | None = None
    chat_type: str = "dm"
    user_id: str | None = None
    user_name: str | None = None
    thread_id: str | None = None
    chat_topic: str | None = None
    user_id_alt: str | None = None
    chat_id_alt: str | None = None
    is_bot: bool = False
    scope_id: str | None = None
    guild_id: str | None = None
    parent_chat_id: str | None = None
    message_id: str | None = None
    role_authorized: bool = False
    profile: str | None = None
    auto_thread_created: bool = False
    auto_thread_initial_name: str | None = None


@dataclass
class MessageEvent:
    """A received message as 0.19 adapters build it; :meth:`to_inbound` is what the gateway
    gets."""

    text: str
    message_type: MessageType = MessageType.TEXT
    source: SessionSource | None = None
    raw_message: Any = None
    message_id: str | None = None
    platform_update_id: int | None = None
    media_urls: list[str] = field(default_factory=list)
    media_types: list[str] = field(default_factory=list)
    reply_to_message_id: str | None = None
    reply_to_text: str | None = None
    reply_to_author_id: str | None = None
    reply_to_author_name: str | None = None
    reply_to_is_own_message: bool = False
    auto_skill: str | list[str] | None = None
    channel_prompt: str | None = None
    channel_context: str | None = None
    internal: bool = False
    metadata: dict[str, Any] = field(default_factory=dict)
    timestamp: datetime = field(default_factory=datetime.now)

    def is_command(self) -> bool:
        return self.text.startswith("/")

    def get_command(self) -> str | None:
        if not self.is_command() or len(self.text) < 2:
            return None
        return self.text[1:].split(maxsplit=1)[0].split("@", 1)[0].lower() or None

    def get_command_args(self) -> str:
        parts = self.text.split(maxsplit=1) if self.is_command() else ["", self.text]
        return parts[1].strip() if len(parts) > 1 else ""

    def to_inbound(self, platform: str) -> InboundMessage:
        source = self.source
        if source is None:
            raise ValueError("MessageEvent has no source; build it with self.build_source(...)")
        name = str(getattr(source.platform, "value", source.platform) or platform)
        return InboundMessage(name, str(source.chat_id), str(source.user_id or ""), self.text,
                              user_name=source.user_name or "", thread_id=source.thread_id,
                              message_id=self.message_id, chat_type=source.chat_type or "dm",
                              raw=self)


@dataclass
class SendResult(_SendResult):
    """``hermes_agent.api.SendResult`` that also takes 0.19's fields (``raw_response`` is
    kept as ``raw`` too)."""

    raw_response: Any = None
    continuation_message_ids: tuple[str, ...] = ()
    error_kind: str | None = None

    def __post_init__(self) -> None:
        if self.raw is None:
            self.raw = self.raw_response


class BasePlatformAdapter(PlatformAdapter):
    """A ``PlatformAdapter`` with 0.19's adapter API: built as ``Adapter(config, platform)``;
    ``handle_message`` takes a :class:`MessageEvent`; ``MAX_MESSAGE_LENGTH`` is where the
    gateway splits replies, unless ``splits_long_messages`` says ``send`` splits them itself."""

    splits_long_messages: bool = False
    supports_code_blocks: bool = False

    def __init__(self, config: Any = None, platform: Any = None):
        super().__init__(config, platform)
        self.platform = platform if platform is not None else Platform(self.name or "local")
        self._running = False
        self._fatal_error_code: str | None = None
        self._fatal_error_message: str | None = None
        self._fatal_error_retryable = True

    @property  # type: ignore[override]
    def max_message_length(self) -> int:
        override = self.__dict__.get("_max_message_length")
        if override is not None:
            return int(override)
        return 0 if self.splits_long_messages else int(getattr(self, "MAX_MESSAGE_LENGTH", 0) or 0)

    @max_message_length.setter
    def max_message_length(self, value: int) -> None:
        self.__dict__["_max_message_length"] = value

    @property
    def message_len_fn(self) -> Callable[[str], int]:
        return len

    def truncate_message(self, content: str, max_length: int = 4096,
                         len_fn: Callable[[str], int] | None = None) -> list[str]:
        """0.19's name for :func:`~hermes_agent.kits.chat_text.split_message`."""
        return split_message(content, max_length, len_fn)

    @property
    def is_connected(self) -> bool:
        return self._running

    @property
    def has_fatal_error(self) -> bool:
        return self._fatal_error_message is not None

    @property
    def fatal_error_message(self) -> str | None:
        return self._fatal_error_message

    @property
    def fatal_error_code(self) -> str | None:
        return self._fatal_error_code

    def _mark_connected(self) -> None:
        self._running = True
        self._fatal_error_code = self._fatal_error_message = None

    def _mark_disconnected(self) -> None:
        self._running = False

    def _set_fatal_error(self, code: str, message: str, *, retryable: bool) -> None:
        self._running = False
        self._fatal_error_code, self._fatal_error_message = code, message
        self._fatal_error_retryable = retryable
        log.error("gateway: platform %s failed (%s): %s", self.name, code, message)
        if not retryable:
            self.report_fatal(f"{message} ({code})")

    async def handle_message(self, message: Any) -> str | None:  # type: ignore[override]
        if isinstance(message, MessageEvent):
            message = message.to_inbound(self.name)
        return await super().handle_message(message)

    def build_source(self, chat_id: str, chat_name: str | None = None, chat_type: str = "dm",
                     user_id: str | None = None, user_name: str | None = None,
                     thread_id: str | None = None, **more: Any) -> SessionSource:
        known = SessionSource.__dataclass_fields__
        extra = {k: (str(v) if k.endswith("_id") and v is not None else v)
                 for k, v in more.items() if k in known}
        return SessionSource(self.platform, str(chat_id), chat_name, chat_type,
                             str(user_id) if user_id else None, user_name,
                             str(thread_id) if thread_id else None, **extra)

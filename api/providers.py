"""Base classes of the slot providers (memory, context engine), with the method set plugins
written for Hermes Agent 0.19 expect (web backends: :mod:`.web`). Subclass them
(``from hermes_agent.api import MemoryProvider``) or write any object with the same methods:
the slots only call what is documented here.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from . import tool_error


class MemoryProvider(ABC):
    """An external memory backend (the ``memory`` slot holds the builtin one plus at most one
    of these, chosen by ``memory.provider``). ``"builtin"`` is a reserved name."""

    @property
    @abstractmethod
    def name(self) -> str:
        """A short identifier, used by ``memory.provider``."""

    @abstractmethod
    def is_available(self) -> bool:
        """Whether configuration and dependencies are present. No network calls."""

    @abstractmethod
    def initialize(self, session_id: str, **kwargs: Any) -> None:
        """Start a session. ``kwargs`` always has ``hermes_home`` and ``platform``; it may have
        ``agent_context``, ``parent_session_id``, ``user_id``, ``chat_id`` and similar."""

    @abstractmethod
    def get_tool_schemas(self) -> list[dict[str, Any]]:
        """Function schemas of the tools this provider offers (may be empty)."""

    def system_prompt_block(self) -> str:
        """Static text added to the system prompt once per session."""
        return ""

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        """Context to recall before a turn (run with a timeout)."""
        return ""

    def queue_prefetch(self, query: str, *, session_id: str = "") -> None:
        """Warm up recall for the next turn in the background."""

    def sync_turn(self, user_content: str, assistant_content: str, *, session_id: str = "",
                  messages: list[dict[str, Any]] | None = None) -> None:
        """Store a finished turn (called on a background worker, in order)."""

    def handle_tool_call(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> str:
        """Run one of this provider's tools; return a JSON string."""
        return tool_error(f"memory provider {self.name!r} has no tool {tool_name!r}")

    def shutdown(self) -> None:
        """Flush and release resources."""

    def on_turn_start(self, turn_number: int, message: str, **kwargs: Any) -> None:
        """A user turn begins."""

    def on_session_end(self, messages: list[dict[str, Any]]) -> None:
        """A real session boundary (exit, /new)."""

    def on_session_switch(self, new_session_id: str, *, parent_session_id: str = "",
                          reset: bool = False, rewound: bool = False, **kwargs: Any) -> None:
        """The conversation moved to another session (resume, reset, compression)."""

    def on_pre_compress(self, messages: list[dict[str, Any]]) -> str:
        """Text to include in the compression prompt."""
        return ""

    def on_memory_write(self, action: str, target: str, content: str,
                        metadata: dict[str, Any] | None = None) -> None:
        """Mirror a write made by the builtin memory tool (add/replace/remove)."""

    def on_delegation(self, task: str, result: str, *, child_session_id: str = "",
                      **kwargs: Any) -> None:
        """A subagent finished a delegated task (called on the parent)."""

    def get_config_schema(self) -> list[dict[str, Any]]:
        """Settings a setup command can ask for."""
        return []

    def save_config(self, values: dict[str, Any], hermes_home: str) -> None:
        """Persist settings gathered from ``get_config_schema``."""

    def backup_paths(self) -> list[str]:
        """State kept outside HERMES_HOME that a backup should include."""
        return []


class ContextEngine(ABC):
    """Keeps a conversation inside the model's window (the ``context_engine`` slot, chosen by
    ``context.engine``). The host reads the token counters below after every call."""

    last_prompt_tokens: int = 0
    last_completion_tokens: int = 0
    last_total_tokens: int = 0
    threshold_tokens: int = 0
    context_length: int = 0
    compression_count: int = 0
    threshold_percent: float = 0.75
    protect_first_n: int = 3
    protect_last_n: int = 6

    @property
    @abstractmethod
    def name(self) -> str:
        """A short identifier, used by ``context.engine``."""

    @abstractmethod
    def update_from_response(self, usage: dict[str, Any]) -> None:
        """Record the usage of the latest model call."""

    @abstractmethod
    def should_compress(self, prompt_tokens: int | None = None) -> bool:
        """Whether the conversation must be compressed before the next call."""

    @abstractmethod
    def compress(self, messages: list[dict[str, Any]], current_tokens: int | None = None,
                 focus_topic: str | None = None, force: bool = False,
                 memory_context: str = "") -> list[dict[str, Any]]:
        """Return the compressed message list."""

    def should_compress_preflight(self, messages: list[dict[str, Any]]) -> bool:
        return False

    def should_defer_preflight_to_real_usage(self, rough_tokens: int) -> bool:
        return False

    def has_content_to_compress(self, messages: list[dict[str, Any]]) -> bool:
        return True

    def on_session_start(self, session_id: str, **kwargs: Any) -> None:
        """A session begins."""

    def on_session_end(self, session_id: str, messages: list[dict[str, Any]]) -> None:
        """A session ends."""

    def on_session_reset(self) -> None:
        """``/new``: clear the token counters and the compression count."""
        self.last_prompt_tokens = self.last_completion_tokens = self.last_total_tokens = 0
        self.compression_count = 0

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return []

    def handle_tool_call(self, name: str, args: dict[str, Any], **kwargs: Any) -> str:
        return tool_error(f"context engine {self.name!r} has no tool {name!r}")

    def get_status(self) -> dict[str, Any]:
        return {"name": self.name, "last_prompt_tokens": self.last_prompt_tokens,
                "threshold_tokens": self.threshold_tokens,
                "compression_count": self.compression_count}

    def update_model(self, model: str, context_length: int, base_url: str = "",
                     api_key: str = "", provider: str = "", api_mode: str = "") -> None:
        """The model changed: recompute the compression threshold."""
        self.context_length = context_length
        self.threshold_tokens = int(context_length * self.threshold_percent)

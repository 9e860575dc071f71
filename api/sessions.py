"""The session-store slot interface: what every backend implements and every caller uses.

The builtin backend is the ``sessions`` plugin's SQLite store (``sessions.store: sqlite``). Another backend (PostgreSQL for several gateway replicas, say) is a
plugin whose ``register(ctx)`` calls ``ctx.register_session_store(obj)`` with an object that has
a ``name`` and these methods. Rows are plain dicts with the keys of the TypedDicts below; times
are Unix epoch seconds (floats).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, Protocol, TypedDict, runtime_checkable

from hermes_agent import HermesError


class SessionStoreError(HermesError):
    """The store cannot do what was asked; the message says how to fix it."""


class TitleConflictError(SessionStoreError):
    """Another session already has this title (titles are unique when set)."""


class InvalidArgumentError(SessionStoreError, ValueError):
    """An argument is out of range or of the wrong type; the message names what is allowed."""


class SearchTimeoutError(SessionStoreError):
    """A search ran past the store's time budget and was stopped; the message says how to
    narrow it. No other work of the store waited for it."""

    @classmethod
    def after(cls, seconds: float) -> "SearchTimeoutError":
        """The error of a search stopped after ``seconds``."""
        return cls(f"the search took longer than {seconds:g} s and was stopped. Use fewer or "
                   "longer words (short prefixes such as ab* and many OR terms are the costly "
                   "ones), or filter by source or role.")


class SessionRow(TypedDict, total=False):
    id: str
    source: str  # "cli", "telegram", "discord", "cron", "subagent", ...
    user_id: str | None
    model: str | None
    model_config: str | None  # JSON text
    system_prompt: str | None  # frozen at session start (prompt cache)
    parent_session_id: str | None
    started_at: float
    ended_at: float | None
    end_reason: str | None  # "user", "compression", "max_iterations", ...
    message_count: int
    tool_call_count: int
    api_call_count: int
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    reasoning_tokens: int
    billing_provider: str | None
    billing_base_url: str | None
    billing_mode: str | None
    estimated_cost_usd: float | None
    actual_cost_usd: float | None
    cost_status: str | None
    cost_source: str | None
    pricing_version: str | None
    title: str | None
    # list_sessions_rich only:
    preview: str  # start of the first user message
    last_active: float
    lineage: list[str]  # compression chain, root first, when projected onto its tip


class MessageRow(TypedDict, total=False):
    id: int
    session_id: str
    role: str  # system | user | assistant | tool
    content: Any  # text, or a list of parts for multimodal messages
    tool_call_id: str | None
    tool_calls: list[dict[str, Any]] | None
    tool_name: str | None
    timestamp: float
    token_count: int | None
    finish_reason: str | None
    reasoning: str | None
    reasoning_content: str | None
    reasoning_details: Any
    codex_reasoning_items: Any
    codex_message_items: Any
    provenance: Any  # {"trust": "untrusted", "source": "web:example.com"}; None: trusted


class SearchResult(TypedDict):
    id: int
    session_id: str
    role: str
    timestamp: float
    snippet: str  # matched terms wrapped in >>> <<<
    context: list[dict[str, Any]]  # the message before and after: {id, role, content[:200]}
    source: str
    model: str | None
    session_started: float


@runtime_checkable
class SessionStore(Protocol):
    """A session store. Methods that take a ``session_id`` raise :class:`SessionStoreError` for
    an unknown id when they write, and return ``None``/empty when they read."""

    name: str

    # --- sessions ----------------------------------------------------------------------
    def create_session(self, session_id: str | None = None, *, source: str,
                       model: str | None = None, user_id: str | None = None,
                       parent_session_id: str | None = None, model_config: Any = None,
                       system_prompt: str | None = None, title: str | None = None,
                       started_at: float | None = None) -> str:
        """Create a session (a new id when none is given) and return its id."""

    def get_session(self, session_id: str) -> SessionRow | None: ...

    def end_session(self, session_id: str, end_reason: str = "user") -> None: ...

    def reopen_session(self, session_id: str) -> None:
        """Clear ``ended_at``/``end_reason`` so the session continues."""

    def update_system_prompt(self, session_id: str, system_prompt: str) -> None: ...

    def update_session_model(self, session_id: str, model: str,
                             model_config: Any = None) -> None: ...

    def update_token_counts(self, session_id: str, *, input_tokens: int = 0,
                            output_tokens: int = 0, cache_read_tokens: int = 0,
                            cache_write_tokens: int = 0, reasoning_tokens: int = 0,
                            api_call_count: int = 0, estimated_cost_usd: float | None = None,
                            actual_cost_usd: float | None = None, cost_status: str | None = None,
                            cost_source: str | None = None, pricing_version: str | None = None,
                            billing_provider: str | None = None,
                            billing_base_url: str | None = None, billing_mode: str | None = None,
                            model: str | None = None, absolute: bool = False) -> None:
        """Add (or with ``absolute=True`` set) token, API-call and cost counters."""

    # --- messages ----------------------------------------------------------------------
    def append_message(self, session_id: str, role: str, content: Any = None, *,
                       tool_name: str | None = None, tool_calls: Any = None,
                       tool_call_id: str | None = None, token_count: int | None = None,
                       finish_reason: str | None = None, reasoning: str | None = None,
                       reasoning_content: str | None = None, reasoning_details: Any = None,
                       codex_reasoning_items: Any = None, codex_message_items: Any = None,
                       timestamp: float | None = None, provenance: Any = None) -> int:
        """Store one message durably and return its id (counters are updated in the same
        transaction). ``provenance``: ``{"trust": "untrusted", "source": ...}`` for text that
        did not come from the user (None: trusted); replayed by
        :meth:`get_messages_as_conversation`."""

    def get_messages(self, session_id: str, limit: int | None = None,
                     offset: int = 0) -> list[MessageRow]: ...

    def get_messages_as_conversation(self, session_id: str) -> list[dict[str, Any]]:
        """The session in OpenAI chat format for replay. Reasoning is stored but not replayed."""

    def replace_messages(self, session_id: str, messages: Iterable[dict[str, Any]]) -> None:
        """Rewrite the transcript (``/undo``, ``/retry``, compression in place)."""

    def clear_messages(self, session_id: str) -> int: ...

    # --- titles ------------------------------------------------------------------------
    def set_session_title(self, session_id: str, title: str | None) -> str | None:
        """Set (or clear with None/"") a title; returns the cleaned title. Raises
        :class:`TitleConflictError` when another session has it."""

    def set_title_if_untitled(self, session_id: str, title: str) -> str | None:
        """Set ``title`` only while the session has none (one atomic step, so a title the user
        set meanwhile is kept); returns the cleaned title, or None when the session already
        had one. Raises :class:`TitleConflictError` when another session has it."""

    def resolve_session_by_title(self, title: str) -> str | None:
        """The newest session in the lineage of ``title`` ("X", "X #2", ...)."""

    def get_next_title_in_lineage(self, base_title: str) -> str:
        """"X" -> "X #2" -> "X #3": the first free title in the lineage."""

    def resolve_session_id(self, key: str) -> str | None:
        """A session id from an id, a unique id prefix or a title."""

    # --- lineage and listing -----------------------------------------------------------
    def get_ancestors(self, session_id: str) -> list[SessionRow]: ...

    def get_descendants(self, session_id: str) -> list[SessionRow]: ...

    def get_compression_tip(self, session_id: str) -> str:
        """The newest session of the compression chain ``session_id`` belongs to."""

    def list_sessions(self, source: str | None = None, limit: int = 20,
                      offset: int = 0) -> list[SessionRow]: ...

    def list_sessions_rich(self, *, source: str | None = None,
                           exclude_sources: Iterable[str] | None = None, limit: int = 20,
                           offset: int = 0, include_children: bool = False,
                           project_compression_tips: bool = True) -> list[SessionRow]: ...

    # --- search, statistics, export, clean-up ------------------------------------------
    def search_messages(self, query: str, *, source_filter: Iterable[str] | None = None,
                        exclude_sources: Iterable[str] | None = None,
                        role_filter: Iterable[str] | None = None, limit: int = 20,
                        offset: int = 0, sort: str | None = None,
                        exclude_sessions: Iterable[str] | None = None) -> list[SearchResult]:
        """Full-text search (FTS5 syntax; user input is sanitised and never raises).
        ``exclude_sessions``: ids whose messages are left out (session_search drops the
        current conversation's lineage this way, before ranking and the limit)."""

    def usage_stats(self, source: str | None = None) -> dict[str, Any]: ...

    def export_session(self, session_id: str) -> dict[str, Any] | None:
        """The session row plus ``messages``."""

    def export_all(self, source: str | None = None) -> Iterator[dict[str, Any]]: ...

    def prune_sessions(self, older_than_days: float = 90, source: str | None = None) -> int:
        """Delete ended sessions older than the cut-off; returns how many."""

    def delete_session(self, session_id: str) -> bool: ...

    def close(self) -> None: ...


def session_store(kernel: Any) -> SessionStore:
    """The session store selected by ``sessions.store`` (default ``sqlite``) in ``kernel``.
    Raises SlotError naming the installed stores when the selected one is missing."""
    store = kernel.slots.active("session_store", kernel.config)
    if store is None:
        raise SessionStoreError("no session store is selected; set sessions.store in config.yaml "
                                "(the builtin one is 'sqlite')")
    return store  # type: ignore[no-any-return]

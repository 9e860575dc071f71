"""The agent as the modules that work on it see it: what :mod:`.context_link`,
:mod:`.context_tools` and :mod:`.memory_link` read and set on :class:`~.loop.Agent`. They
take an ``AgentHost``, so they need not import :mod:`.loop`, whose ``Agent`` calls them."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from hermes_agent.api import CancelToken, ModelClient

from .memory_manager import MemoryManager
from .store_link import SessionLink
from .turn_types import AgentOptions

if TYPE_CHECKING:
    from hermes_agent import Kernel


class AgentHost(Protocol):
    kernel: Kernel
    options: AgentOptions
    client: ModelClient
    sessions: SessionLink
    memory: MemoryManager | None
    context: Any  # the agent's copy of the context engine, None without one
    context_mark: int
    session_id: str
    history: list[dict[str, Any]]
    system_prompt: str | None
    tool_names: list[str]
    tool_defs: list[dict[str, Any]]
    tool_routes: dict[str, Callable[..., str]]
    tool_origins: dict[str, tuple[str, str]]
    _interrupt: CancelToken
    taint: Any  # the session's fence nonce and taint (a .taint_link.SessionTaint)

    @property
    def model(self) -> str: ...

    @property
    def provider(self) -> str: ...

    @property
    def platform(self) -> str: ...

    def reset_sent_context(self) -> None: ...

    def rebuild_system_prompt(self) -> str: ...

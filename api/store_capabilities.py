"""What a session store may offer besides :class:`~.sessions.SessionStore`: a caller checks
with ``isinstance`` (each Protocol is ``runtime_checkable``) and uses what the store declares.
Contracts only."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class SessionImporter(Protocol):
    """A store that imports exported sessions (``hermes sessions import``, ``migrate``)."""

    def import_records(self, records: Iterable[dict[str, Any]], *,
                       keep_message_ids: bool = False) -> dict[str, Any]:
        """Insert the sessions it lacks, parents first; the counts."""


@runtime_checkable
class LastActiveSessions(Protocol):
    """A store that knows which session of a source was used last (``--continue``)."""

    def last_active_session(self, source: str) -> str | None:
        """That session's id, or None."""


@runtime_checkable
class GatewayQueue(Protocol):
    """A message queue every gateway replica on one database shares."""

    def accept(self, chat_key: str, message: dict[str, Any],
               dedupe_key: str | None) -> int | None:
        """Store a message; its id, or None when ``dedupe_key`` was stored before."""

    def claim(self, replica: str, ttl: float,
              limit: int) -> list[tuple[int, str, dict[str, Any], int]]:
        """Lease free chats with waiting messages: ``(id, chat_key, message, attempts)``."""

    def lease(self, replica: str, chat_key: str, ttl: float) -> bool:
        """Take or keep one chat's lease; False while another live replica holds it."""

    def renew(self, replica: str, chat_keys: list[str], ttl: float) -> list[str]:
        """Extend these leases; those still held."""

    def release(self, replica: str, chat_keys: list[str] | None = None) -> None:
        """Give up these leases (else all of this replica's)."""

    def done(self, message_id: int) -> None:
        """A message answered."""

    def depth(self) -> int:
        """Messages accepted and not answered yet, across every replica."""

    def wait(self, timeout: float) -> None:
        """Until a message is accepted somewhere or ``timeout`` seconds pass."""

    def try_lead(self, role: str) -> bool:
        """Whether this process holds (or now takes) the one lock of ``role``."""

    def session_of(self, chat_key: str) -> str | None:
        """The session a chat continues."""

    def set_session(self, chat_key: str, session_id: str | None) -> None:
        """Map a chat to its session (None: forget it)."""

    def claim_occurrence(self, replica: str, occurrence: str) -> bool:
        """Whether this replica runs a scheduled job's ``occurrence`` (the first to ask)."""

    def heartbeat(self, replica: str, info: dict[str, Any]) -> None:
        """This replica is alive; what it says about itself."""

    def replicas(self, max_age: float) -> list[dict[str, Any]]:
        """The replicas seen in the last ``max_age`` seconds."""

    def leave(self, replica: str) -> None:
        """A replica stopping cleanly: its leases and its row go."""

    def close(self) -> None:
        """Close the queue's connections."""


@runtime_checkable
class SharedQueueStore(Protocol):
    """A store whose database gateway replicas share a queue in (the ``postgres`` store)."""

    def gateway_queue(self) -> GatewayQueue:
        """A new handle on that queue (the caller closes it)."""

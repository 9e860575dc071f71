"""The loop's view of the session store slot (``sessions.store``, default ``sqlite``).

The store persists sessions and messages; this module keeps the calls the loop makes in one
place, so the loop reads as the algorithm and the store can evolve behind it.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from hermes_agent.api import LastActiveSessions, SessionStore, session_store
from hermes_agent.kits.sql.values import mark_usage_estimated

from .provenance import NONCE_KEY

if TYPE_CHECKING:
    from hermes_agent import Kernel


def active_store(kernel: "Kernel") -> SessionStore:
    """The selected session store (``sessions.store``); a clear error when none is installed."""
    return session_store(kernel)


class SessionLink:
    """Thin adapter over the store's methods."""

    def __init__(self, store: SessionStore):
        self.store = store
        self._estimated: set[str] = set()  # sessions marked as holding estimated counts

    def create(self, session_id: str, *, source: str, model: str, provider: str,
               parent_session_id: str | None = None, fence_nonce: str = "") -> None:
        config = {"provider": provider, "model": model}
        if fence_nonce:
            config[NONCE_KEY] = fence_nonce
        self.store.create_session(session_id, source=source, model=model,
                                  parent_session_id=parent_session_id, model_config=config)

    def fence_nonce(self, session_id: str) -> str:
        """The session's fence nonce, kept in its ``model_config`` JSON ("" when none)."""
        return str(self._model_config(session_id).get(NONCE_KEY) or "")

    def set_fence_nonce(self, session_id: str, nonce: str) -> None:
        session = self.get(session_id) or {}
        config = self._model_config(session_id)
        self.store.update_session_model(session_id, session.get("model") or "",
                                        {**config, NONCE_KEY: nonce})

    def chosen_model(self, session_id: str) -> tuple[str, str] | None:
        """The (provider, model) the session last used, as :meth:`set_model` stored it."""
        config = self._model_config(session_id)
        if config.get("provider") and config.get("model"):
            return str(config["provider"]), str(config["model"])
        return None

    def _model_config(self, session_id: str) -> dict[str, Any]:
        config = (self.get(session_id) or {}).get("model_config")
        try:
            config = json.loads(config) if isinstance(config, str) else config
        except ValueError:
            return {}
        return config if isinstance(config, dict) else {}

    def set_model(self, session_id: str, provider: str, model: str) -> None:
        """Remember the session's model (``/model``, a resume with ``--model``)."""
        config = self._model_config(session_id)
        self.store.update_session_model(session_id, model,
                                        {**config, "provider": provider, "model": model})

    def get(self, session_id: str) -> dict[str, Any] | None:
        session = self.store.get_session(session_id)
        if session is None:
            return None
        return session if isinstance(session, dict) else dict(vars(session))

    def system_prompt(self, session_id: str) -> str:
        session = self.get(session_id) or {}
        return session.get("system_prompt") or ""

    def set_system_prompt(self, session_id: str, prompt: str) -> None:
        self.store.update_system_prompt(session_id, prompt)

    def append(self, session_id: str, message: dict[str, Any], *,
               finish_reason: str | None = None, token_count: int | None = None) -> None:
        calls = message.get("tool_calls")
        self.store.append_message(
            session_id, message["role"], content=message.get("content"),
            tool_name=message.get("tool_name"),
            tool_calls=calls if calls else None,
            tool_call_id=message.get("tool_call_id"), finish_reason=finish_reason,
            token_count=token_count, reasoning=message.get("reasoning"),
            reasoning_details=message.get("reasoning_details") or None,
            **({"provenance": message["provenance"]} if message.get("provenance") else {}))

    def conversation(self, session_id: str) -> list[dict[str, Any]]:
        messages = self.store.get_messages_as_conversation(session_id)
        out = []
        for message in messages:
            message = dict(message)
            details = message.get("reasoning_details")
            if isinstance(details, str):
                try:
                    message["reasoning_details"] = json.loads(details)
                except ValueError:
                    message.pop("reasoning_details")
            out.append(message)
        return [m for m in out if m.get("role") != "system"]

    def add_usage(self, session_id: str, response: Any) -> None:
        usage = response.usage
        cost = response.cost
        self.store.update_token_counts(
            session_id, input_tokens=usage.input_tokens, output_tokens=usage.output_tokens,
            cache_read_tokens=usage.cache_read_tokens, cache_write_tokens=usage.cache_write_tokens,
            reasoning_tokens=usage.reasoning_tokens,
            estimated_cost_usd=cost.amount_usd if cost else None,
            cost_status=cost.status if cost else None, api_call_count=1,
            model=response.model or None)
        if usage.estimated and session_id not in self._estimated:
            self._mark_estimated(session_id)

    def _mark_estimated(self, session_id: str) -> None:
        self._estimated.add(session_id)
        mark_usage_estimated(self.store, session_id)

    def end(self, session_id: str, reason: str) -> None:
        self.store.end_session(session_id, reason)

    def compression_tip(self, session_id: str) -> str:
        """The newest session of ``session_id``'s compression chain (itself if none)."""
        return self.store.get_compression_tip(session_id)

    def reopen(self, session_id: str) -> None:
        self.store.reopen_session(session_id)

    def resolve(self, key: str) -> str | None:
        """A session id from an id, a unique id prefix or a title."""
        if self.get(key) is not None:
            return key
        return self.store.resolve_session_id(key) or self.store.resolve_session_by_title(key)

    def latest(self, source: str) -> str | None:
        """The session of ``source`` used last (for ``--continue``); a store without
        ``last_active_session`` gives the newest-started one."""
        if isinstance(self.store, LastActiveSessions):
            return self.store.last_active_session(source)
        rows = self.store.list_sessions(source=source, limit=1)
        if not rows:
            return None
        row = rows[0]
        return row["id"] if isinstance(row, dict) else row.id

    def title(self, session_id: str) -> str | None:
        return (self.get(session_id) or {}).get("title")

    def set_title(self, session_id: str, title: str) -> None:
        self.store.set_session_title(session_id, title)

    def next_title(self, title: str) -> str:
        """The title of the next session in ``title``'s lineage ("X" -> "X #2" -> "X #3")."""
        return self.store.get_next_title_in_lineage(title)

    def replace(self, session_id: str, messages: list[dict[str, Any]]) -> None:
        """Rewrite the stored transcript (``/undo``, ``/retry``, compression)."""
        self.store.replace_messages(session_id, messages)

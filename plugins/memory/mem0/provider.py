"""The ``mem0`` memory provider: recall from Mem0 before each turn, store each finished turn,
mirror builtin memory writes, and the ``mem0_*`` tools.

Every Mem0 failure is contained here: recall returns nothing, storing is logged, tools return
a tool error. The client's retries, time budgets and circuit breaker keep a slow or down Mem0
from costing turns more than ``prefetch_timeout``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping
from typing import Any

from hermes_agent.api import MemoryProvider, tool_error, tool_result

from . import tools
from .breaker import CircuitBreaker
from .client import Mem0Client, RetryPolicy, Timeouts
from .errors import Mem0Error, Mem0Unavailable
from .settings import DEFAULT_USER, Mem0Settings, config_schema, save

log = logging.getLogger("hermes_agent.plugins.mem0")
WARM_TTL = 300.0  # seconds a queued recall stays usable
RECALL_CHARS = 4000  # most text one recall adds to a turn
BUILTIN_SOURCE = "hermes_builtin_memory"


class Mem0Provider(MemoryProvider):
    """Mem0 as hermes' external memory (``memory.provider: mem0``)."""

    def __init__(self, config: Mapping[str, Any] | None = None,
                 env: Mapping[str, str] | None = None):
        self.settings = Mem0Settings.load(config, env or {})
        self.session_id = ""
        self.user_id = self.settings.user_id or DEFAULT_USER
        self.agent_id = self.settings.agent_id
        self.platform = ""
        self._client: Mem0Client | None = None
        self._lock = threading.Lock()
        self._warm: tuple[str, str, float] | None = None  # (query, recall, when)
        self.breaker = CircuitBreaker(self.settings.failure_threshold, self.settings.cooldown)

    @property
    def name(self) -> str:
        return "mem0"

    def is_available(self) -> bool:
        return bool(self.settings.api_key or self.settings.host)

    @property
    def client(self) -> Mem0Client:
        with self._lock:
            if self._client is None or self._client.closed:
                s = self.settings
                self._client = Mem0Client(
                    api_key=s.api_key, host=s.base_url, breaker=self.breaker,
                    timeouts=Timeouts(connect=s.connect_timeout, read=s.timeout),
                    retry=RetryPolicy(max_retries=s.max_retries,
                                      retry_after_cap=s.retry_after_cap))
            return self._client

    # --- session ---------------------------------------------------------------------------
    def initialize(self, session_id: str, **kwargs: Any) -> None:
        self.session_id = session_id
        self.platform = str(kwargs.get("platform") or "")
        self.user_id = self.settings.user_id or str(kwargs.get("user_id") or "") or DEFAULT_USER
        self.agent_id = self.settings.agent_id
        self._forget_warm()

    def on_session_switch(self, new_session_id: str, **kwargs: Any) -> None:
        self.session_id = new_session_id

    def on_session_end(self, messages: list[dict[str, Any]]) -> None:
        self._forget_warm()  # turns are stored as they finish: nothing else is pending

    def _forget_warm(self) -> None:
        with self._lock:
            self._warm = None

    def shutdown(self) -> None:
        with self._lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()

    close = shutdown

    def system_prompt_block(self) -> str:
        return ("## Long-term memory (Mem0)\n"
                "Memories about the user are kept in Mem0. Those relevant to a message arrive "
                "with it as recalled memory context. Use mem0_search to look further, mem0_add "
                "to save a lasting fact, and mem0_forget to delete a wrong one (by its id).")

    # --- recall ----------------------------------------------------------------------------
    def _filters(self) -> dict[str, Any]:
        return {"AND": [{"user_id": self.user_id}]}

    def _recall(self, query: str, budget: float) -> str:
        found = self.client.search(query, filters=self._filters(), top_k=self.settings.top_k,
                                   budget=budget)
        return format_recall(found)

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        query = query.strip()
        if not query:
            return ""
        with self._lock:
            warm, self._warm = self._warm, None
        if warm and warm[0] == query and time.monotonic() - warm[2] < WARM_TTL:
            return warm[1]
        try:
            return self._recall(query, self.settings.prefetch_timeout)
        except Mem0Error as exc:
            self._report("recall", exc)
            return ""

    def queue_prefetch(self, query: str, *, session_id: str = "") -> None:
        query = query.strip()
        if not query:
            return
        try:
            recall = self._recall(query, self.settings.timeout)
        except Mem0Error as exc:
            self._report("background recall", exc)
            return
        with self._lock:
            self._warm = (query, recall, time.monotonic())

    # --- storing ---------------------------------------------------------------------------
    def _metadata(self, source: str, **extra: Any) -> dict[str, Any]:
        data = {"source": source, "session_id": self.session_id, "platform": self.platform}
        return {k: v for k, v in {**data, **extra}.items() if v not in (None, "")}

    def sync_turn(self, user_content: str, assistant_content: str, *, session_id: str = "",
                  messages: list[dict[str, Any]] | None = None) -> None:
        if not self.settings.sync_turns or not (user_content or "").strip():
            return
        turn = [{"role": "user", "content": user_content}]
        if (assistant_content or "").strip():
            turn.append({"role": "assistant", "content": assistant_content})
        metadata = self._metadata("hermes", session_id=session_id or self.session_id)
        try:
            self.client.add(turn, user_id=self.user_id, agent_id=self.agent_id,
                            metadata=metadata)
        except Mem0Error as exc:
            self._report("storing the turn", exc)

    def on_memory_write(self, action: str, target: str, content: str,
                        metadata: dict[str, Any] | None = None) -> None:
        """Mirror the builtin memory tool: an added entry becomes a memory; a replaced or
        removed one is found again by its text (among the mirrored ones) and changed."""
        if not self.settings.mirror_builtin_memory or not (content or "").strip():
            return
        try:
            if action == "add":
                self._store_entry(content, target)
            elif action == "replace":
                old = self._mirrored((metadata or {}).get("replaced") or "")
                if old:
                    self.client.update(old, text=content,
                                       metadata=self._metadata(BUILTIN_SOURCE, target=target))
                else:
                    self._store_entry(content, target)
            elif action == "remove":
                old = self._mirrored(content)
                if old:
                    self.client.delete(old)
        except Mem0Error as exc:
            self._report(f"mirroring a builtin memory {action}", exc)

    def _store_entry(self, content: str, target: str) -> None:
        self.client.add([{"role": "user", "content": content}], user_id=self.user_id,
                        agent_id=self.agent_id, infer=False,
                        metadata=self._metadata(BUILTIN_SOURCE, target=target))

    def _mirrored(self, text: str) -> str:
        """The id of the mirrored builtin entry with exactly this text ("" if none)."""
        if not text.strip():
            return ""
        filters = {"AND": [{"user_id": self.user_id}, {"metadata": {"source": BUILTIN_SOURCE}}]}
        for memory in self.client.list(filters=filters):
            if (memory.get("memory") or memory.get("text") or "").strip() == text.strip():
                return str(memory.get("id") or "")
        return ""

    # --- tools -----------------------------------------------------------------------------
    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return [dict(schema) for schema in tools.SCHEMAS]

    def handle_tool_call(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> str:
        try:
            if tool_name == tools.SEARCH:
                query = str(args.get("query") or "").strip()
                if not query:
                    return tool_error("mem0_search needs a 'query'")
                top_k = max(1, min(50, int(args.get("top_k") or self.settings.top_k)))
                found = self.client.search(query, filters=self._filters(), top_k=top_k)
                return tool_result(results=[tools.brief(m) for m in found], count=len(found))
            if tool_name == tools.ADD:
                content = str(args.get("content") or "").strip()
                if not content:
                    return tool_error("mem0_add needs the 'content' to remember")
                added = self.client.add([{"role": "user", "content": content}],
                                        user_id=self.user_id, agent_id=self.agent_id,
                                        infer=False, metadata=self._metadata("hermes_tool"))
                saved = [tools.brief(m) for m in added if m.get("id")]
                return tool_result(saved=saved or None, queued=not saved)
            if tool_name == tools.FORGET:
                memory_id = str(args.get("memory_id") or "").strip()
                if not memory_id:
                    return tool_error("mem0_forget needs the 'memory_id' (from mem0_search)")
                self.client.delete(memory_id)
                return tool_result(deleted=memory_id)
        except (TypeError, ValueError) as exc:
            return tool_error(f"{tool_name}: bad arguments: {exc}")
        except Mem0Error as exc:
            kind = "mem0_unavailable" if exc.outage else "mem0_error"
            return tool_error(str(exc), error_type=kind)
        return super().handle_tool_call(tool_name, args, **kwargs)

    # --- setup -----------------------------------------------------------------------------
    def get_config_schema(self) -> list[dict[str, Any]]:
        return config_schema()

    def save_config(self, values: dict[str, Any], hermes_home: str) -> None:
        save(values, hermes_home)

    def _report(self, what: str, exc: Mem0Error) -> None:
        if isinstance(exc, Mem0Unavailable):
            log.debug("mem0: %s skipped: %s", what, exc)
        else:
            log.warning("mem0: %s failed: %s", what, exc)


def format_recall(memories: list[dict[str, Any]]) -> str:
    """Recalled memories as a short list for the turn's ``<memory-context>`` block."""
    lines, size = [], 0
    for memory in memories:
        text = " ".join(str(memory.get("memory") or memory.get("text") or "").split())
        if not text or size + len(text) > RECALL_CHARS:
            continue
        lines.append(f"- {text}")
        size += len(text) + 3
    return "Mem0 memories about the user:\n" + "\n".join(lines) if lines else ""

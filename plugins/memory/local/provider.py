"""``LocalMemoryProvider``: the memory slot's ``local`` provider (no service needed).

Lifecycle, as the agent's memory manager drives it:

- ``initialize`` opens ``<hermes_home>/memories/local.db`` (kept open across sessions of
  the same home).
- ``prefetch`` searches the facts for the user's message and returns the best ``top_k`` as
  a short list ('' when nothing matches); it only reads. The facts it recalled are marked
  as used later, on the background worker (``sync_turn``/``queue_prefetch``), so a turn
  never waits for a write lock another process holds.
- ``sync_turn`` extracts facts from the user's message (:mod:`.extract`), drops what the
  injection scan flags, and stores the rest.
- ``queue_prefetch`` runs the search for the message just answered and keeps the result,
  so the same question next turn is answered from memory (any write clears that cache).
- ``on_memory_write`` mirrors the builtin ``memory`` tool's ``add`` and ``replace`` writes.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from hermes_agent.api import MemoryProvider, tool_error

from . import settings as settings_mod
from .extract import extract_facts, problem
from .query import parse
from .store import Fact, FactStore, db_path
from .tools import SCHEMAS, FactTools

log = logging.getLogger("hermes_agent.memory.local")

HEADER = "Facts the user stated in earlier conversations (local memory):"
PROMPT_BLOCK = (
    "## Local memory\n"
    "Facts the user stated in earlier sessions are recalled into a turn when relevant. "
    "Tools: `recall_facts` searches them, `remember_fact` stores a durable fact (never "
    "secrets), `forget_fact` deletes one by id or unique text.")

Scanner = Callable[[str], list[str]]


def fts5_trigram_available() -> bool:
    """Whether this Python's SQLite has FTS5 with the trigram tokenizer (SQLite 3.34+)."""
    try:
        with sqlite3.connect(":memory:") as db:
            db.execute("CREATE VIRTUAL TABLE probe USING fts5(x, tokenize='trigram')")
        return True
    except sqlite3.Error:
        return False


def format_facts(facts: list[Fact]) -> str:
    if not facts:
        return ""
    lines = [f"- {f.text} (#{f.id}, {time.strftime('%Y-%m-%d', time.gmtime(f.created_at))})"
             for f in facts]
    return "\n".join([HEADER, *lines])


class LocalMemoryProvider(MemoryProvider):
    """Facts in a local SQLite file, recalled by BM25 and recency (see the package docs).

    ``config`` is the ``plugins.entries.local`` mapping; ``scanner`` returns the injection
    scan (an object with ``scan(text) -> list[str]``), e.g. the ``injection_scan`` service.
    Without one, nothing is stored (checked writes only, like builtin memory)."""

    name = "local"  # type: ignore[assignment]

    def __init__(self, config: Mapping[str, Any] | None = None,
                 scanner: Callable[[], Any] | None = None):
        self.settings = settings_mod.from_mapping(config)
        self._scanner_source = scanner
        self.store: FactStore | None = None
        self.session_id = ""
        self._open_lock = threading.Lock()
        self._cache: dict[str, tuple[int, str]] = {}  # query -> (generation, text)
        self._generation = 0
        self._recalled: set[int] = set()  # recalled by prefetch, marked used later
        self._recall_lock = threading.Lock()
        self._warned = False

    # --- lifecycle --------------------------------------------------------------------------
    def is_available(self) -> bool:
        return fts5_trigram_available()

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        self.session_id = session_id
        home = kwargs.get("hermes_home")
        if not home:
            raise ValueError("local memory needs hermes_home to find its database")
        path = db_path(home)
        with self._open_lock:
            if self.store is None or self.store.path != path:
                if self.store is not None:
                    self.store.close()
                self.store = FactStore(path, max_facts=self.settings.max_facts)

    def on_session_switch(self, new_session_id: str, **kwargs: Any) -> None:
        self.session_id = new_session_id

    def shutdown(self) -> None:
        with self._open_lock:
            if self.store is not None:
                self._flush_recalled()
                self.store.close()
                self.store = None

    def system_prompt_block(self) -> str:
        return PROMPT_BLOCK

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return [dict(schema) for schema in SCHEMAS]

    def get_config_schema(self) -> list[dict[str, Any]]:
        return settings_mod.schema()

    def save_config(self, values: dict[str, Any], hermes_home: str) -> None:
        settings_mod.save(values, hermes_home)

    # --- recall -----------------------------------------------------------------------------
    def _search(self, query: str) -> list[Fact]:
        if self.store is None:
            return []
        found = self.store.search(parse(query), limit=self.settings.top_k,
                                  half_life_days=self.settings.half_life_days)
        return [fact for fact, _ in found]

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        cached = self._cache.get(query)
        if cached is not None and cached[0] == self._generation:
            return cached[1]
        facts = self._search(query)
        with self._recall_lock:
            self._recalled.update(f.id for f in facts)
        return format_facts(facts)

    def queue_prefetch(self, query: str, *, session_id: str = "") -> None:
        self._flush_recalled()
        generation = self._generation
        text = format_facts(self._search(query))
        self._cache = {query: (generation, text)}  # only the latest question is kept

    def _flush_recalled(self) -> None:
        with self._recall_lock:
            ids, self._recalled = list(self._recalled), set()
        if ids and self.store is not None:
            self.store.touch(ids)

    # --- storing ----------------------------------------------------------------------------
    def _findings(self, text: str) -> list[str] | None:
        """The injection scan's findings; None when no scan is available (logged once)."""
        try:
            if self._scanner_source is None:
                raise LookupError("no injection scan was given to the provider")
            return list(self._scanner_source().scan(text))
        except Exception as exc:
            if not self._warned:
                log.warning("local memory: the injection scan is unavailable (%s); nothing "
                            "is stored", exc)
                self._warned = True
            return None

    def scan(self, text: str) -> list[str]:
        """For the tools: findings, or RuntimeError when the scan is unavailable."""
        findings = self._findings(text)
        if findings is None:
            raise RuntimeError("the agent plugin's injection_scan service is not loaded")
        return findings

    def remember(self, text: str, *, origin: str, session_id: str = "") -> Fact | None:
        """Store ``text`` if it passes the checks (length, secrets, injection scan)."""
        if self.store is None or problem(text) is not None:
            return None
        findings = self._findings(text)
        if findings is None or findings:
            if findings:
                log.info("local memory: a fact was not stored (injection scan: %s)",
                         "; ".join(findings))
            return None
        fact, _ = self.store.add(text, session_id=session_id or self.session_id, origin=origin)
        self._generation += 1
        return fact

    def sync_turn(self, user_content: str, assistant_content: str, *, session_id: str = "",
                  messages: list[dict[str, Any]] | None = None) -> None:
        self._flush_recalled()
        for text in extract_facts(user_content if isinstance(user_content, str) else ""):
            self.remember(text, origin="turn", session_id=session_id)

    def on_memory_write(self, action: str, target: str, content: str,
                        metadata: dict[str, Any] | None = None) -> None:
        if action in ("add", "replace") and isinstance(content, str) and content.strip():
            self.remember(content.strip(), origin="memory-tool")

    # --- tools ------------------------------------------------------------------------------
    def handle_tool_call(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> str:
        if self.store is None:
            return tool_error("local memory is not initialised yet")
        tools = FactTools(self.store, self.scan, top_k=self.settings.top_k,
                          half_life_days=self.settings.half_life_days,
                          session_id=kwargs.get("session_id") or self.session_id)
        result = tools.call(tool_name, args)
        if tool_name != "recall_facts":
            self._generation += 1  # a write: the warmed prefetch may be stale
        return result

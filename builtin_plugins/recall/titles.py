"""Titles for new sessions: after a session's first exchange, the auxiliary
``title_generation`` model names it, on a daemon thread of its own.

The turn never waits: ``post_llm_call`` only starts the thread. A failure or timeout (the
task's ``auxiliary.title_generation.timeout``, 30 s by default) is logged and leaves the
session untitled. The title is stored only while the session still has none, in one step, so a
title the user set meanwhile is kept; a title another session already has gets " (2)", " (3)",
... (titles are unique in the store). Subagent sessions are not named. At shutdown the kernel
waits at most DRAIN_S for titles still being made; none is written after that.
"""

from __future__ import annotations

import logging
import threading
import time
import unicodedata
from typing import TYPE_CHECKING, Any

from hermes_agent.api import INJECTION_SCAN, MODELS, TitleConflictError, session_store

if TYPE_CHECKING:
    from hermes_agent import Kernel

log = logging.getLogger("hermes_agent.recall.titles")

SYSTEM = ("Give this conversation a short title of 3 to 7 words that says what it is about, "
          "in the language the user wrote in. Reply with the title alone: no quotes, no "
          "label, no final full stop.")
EXCHANGE_CHARS = 2_000  # of the user's message and of the reply, sent to the model
MAX_TITLE_CHARS = 80
MAX_TOKENS = 40
DRAIN_S = 3.0
THREAD_NAME = "hermes-title"
NO_TITLE_PLATFORMS = frozenset({"subagent"})


def clean_title(text: str | None) -> str | None:
    """The model's answer as a title: its first line, without a label, quotes or a final
    full stop, at most MAX_TITLE_CHARS (cut at a word)."""
    line = next((ln.strip() for ln in (text or "").splitlines() if ln.strip()), "")
    # controls (C1's CSI drives terminals listing sessions) and invisible or reordering
    # format characters (bidi overrides) have no place in a title of a few words
    line = "".join(c for c in line if unicodedata.category(c) not in ("Cc", "Cf"))
    if line.lower().startswith("title:"):
        line = line[len("title:"):].strip()
    line = line.strip("\"'`*#“”‘’「」 ").rstrip(".。").strip()
    if len(line) > MAX_TITLE_CHARS:
        line = line[:MAX_TITLE_CHARS].rsplit(" ", 1)[0]
    return line or None


def is_first_exchange(history: list[dict[str, Any]], user_message: str) -> bool:
    first = next((m for m in history if m.get("role") == "user"), None)
    return first is not None and first.get("content") == user_message


class Titler:
    """Names the sessions of one kernel, once each per process."""

    def __init__(self, kernel: Kernel):
        self.kernel = kernel
        self._lock = threading.Lock()
        self._asked: set[str] = set()
        self._threads: list[threading.Thread] = []
        self._closed = False

    def enabled(self) -> bool:
        value = self.kernel.config.get("sessions.auto_title")
        return value is None or bool(value)

    def after_turn(self, session_id: str | None = None, user_message: str = "",
                   assistant_response: str = "",
                   conversation_history: list[dict[str, Any]] | None = None,
                   platform: str = "", **_: Any) -> None:
        """``post_llm_call``: start naming the session if this was its first exchange."""
        if (not session_id or platform in NO_TITLE_PLATFORMS or not self.enabled()
                or not is_first_exchange(conversation_history or [], user_message)):
            return
        with self._lock:
            if self._closed or session_id in self._asked:
                return
            self._asked.add(session_id)
            self._threads = [t for t in self._threads if t.is_alive()]
            thread = threading.Thread(target=self.name_session, daemon=True,
                                      name=f"{THREAD_NAME}:{session_id}",
                                      args=(session_id, user_message, assistant_response or ""))
            self._threads.append(thread)
        thread.start()

    def name_session(self, session_id: str, user_message: str, reply: str) -> str | None:
        """Ask for a title and store it; the title stored, or None (reason logged)."""
        try:
            store = session_store(self.kernel)
            session = store.get_session(session_id)
            if session is None or session.get("title"):
                return None
            response = self.kernel.service(MODELS).call_llm(
                "title_generation", _messages(user_message, reply), max_tokens=MAX_TOKENS,
                temperature=0.3, session_id=session_id)
            title = clean_title(response.content)
            if title is None:
                log.info("session %s left untitled: the title model answered nothing usable",
                         session_id)
                return None
            # the title is made from a conversation that may hold hostile text, and later
            # sessions see it (session_search, hermes sessions list)
            findings = list(self.kernel.service(INJECTION_SCAN).scan(title))
            if findings:
                log.warning("session %s left untitled: the title looks like a prompt injection "
                            "(%s)", session_id, ", ".join(findings))
                return None
            return self._store(store, session_id, title)
        except Exception as exc:  # any failure leaves the session untitled
            log.warning("session %s left untitled: title generation failed: %s", session_id,
                        exc)
            return None

    def _store(self, store: Any, session_id: str, title: str) -> str | None:
        for n in range(1, 10):
            candidate = title if n == 1 else f"{title} ({n})"
            with self._lock:
                if self._closed:
                    return None
            try:
                return store.set_title_if_untitled(session_id, candidate)  # type: ignore[no-any-return]
            except TitleConflictError:
                continue
        log.info("session %s left untitled: %r and its numbered variants are taken",
                 session_id, title)
        return None

    def drain(self, timeout: float = DRAIN_S, **_: Any) -> None:
        """Wait up to ``timeout`` seconds (in all) for titles being made, then stop storing
        any (``on_shutdown``)."""
        deadline = time.monotonic() + timeout
        with self._lock:
            threads = list(self._threads)
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        with self._lock:
            self._closed = True


def _messages(user_message: str, reply: str) -> list[dict[str, str]]:
    exchange = (f"User: {user_message[:EXCHANGE_CHARS]}\n\n"
                f"Assistant: {reply[:EXCHANGE_CHARS]}")
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": exchange}]

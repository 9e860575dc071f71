"""session_search's summarisation stage: one query-focused summary per recalled session from the
auxiliary ``session_search`` model, a bounded number at once, all within one time budget.

A session whose summary fails, or is not back when the budget runs out, keeps ``None`` (the
tool shows its snippets instead). Calls still running at the deadline are interrupted (their
connection is shut) and left to end on their daemon threads; the search never waits for them.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, wait
from typing import TYPE_CHECKING

from hermes_agent.api import MODELS

from .recall import Recalled

if TYPE_CHECKING:
    from hermes_agent import Kernel

log = logging.getLogger("hermes_agent.recall")

SYSTEM = (
    "You read an excerpt of an earlier conversation between a user and an AI assistant. It "
    "was found by a search for the words given below. Summarise it for the assistant, who "
    "needs what it learned then: what the user wanted, what was tried, what worked, and the "
    "concrete details (commands, file paths, names, settings, numbers, error messages and "
    "their fixes) that concern the search. Leave out what does not. If the excerpt turns out "
    "to be unrelated to the search, say so in one sentence. Plain text, at most 200 words.")
MAX_TOKENS = 600

# (recalled session, seconds left, interrupt) -> summary text
Summariser = Callable[[Recalled, float, threading.Event], str]


def prompt(query: str, item: Recalled) -> list[dict[str, str]]:
    title = f" titled {item.title!r}" if item.title else ""
    return [{"role": "system", "content": SYSTEM},
            {"role": "user", "content": f"Search: {query}\n\nConversation{title}, started "
                                        f"{item.header()['started']}:\n\n{item.text}"}]


def model_summariser(kernel: Kernel, query: str, session_id: str) -> Summariser:
    """Summaries from the ``models`` service's auxiliary ``session_search`` task (raises
    when no plugin offers that service)."""
    models = kernel.service(MODELS)

    def summarise(item: Recalled, seconds_left: float, stop: threading.Event) -> str:
        response = models.call_llm("session_search", prompt(query, item), temperature=0.1,
                                   max_tokens=MAX_TOKENS, timeout=seconds_left, interrupt=stop,
                                   session_id=session_id or None)
        return (response.content or "").strip()

    return summarise


def summarise_all(items: list[Recalled], summarise: Summariser, *, concurrency: int,
                  budget_s: float) -> tuple[dict[str, str], dict[str, str]]:
    """``(summaries, failures)`` by session id: at most ``concurrency`` calls in flight,
    everything within ``budget_s`` seconds; a failure says why (error or timeout)."""
    if not items:
        return {}, {}
    deadline = time.monotonic() + budget_s
    stop = threading.Event()
    summaries: dict[str, str] = {}
    failures: dict[str, str] = {}
    lock = threading.Lock()

    def run(item: Recalled) -> None:
        left = deadline - time.monotonic()
        if left <= 0 or stop.is_set():
            return
        try:
            text = summarise(item, left, stop)
        except Exception as exc:  # any failure of one summary: its snippets stand in
            if not stop.is_set():
                log.warning("session_search: no summary of session %s: %s", item.session_id,
                            exc)
                with lock:
                    failures[item.session_id] = f"{type(exc).__name__}: {exc}"[:300]
            return
        with lock:
            if text and not stop.is_set():
                summaries[item.session_id] = text
            elif not text:
                failures[item.session_id] = "the summariser returned no text"

    pool = ThreadPoolExecutor(max_workers=max(1, concurrency),
                              thread_name_prefix="hermes-session-search")
    try:
        futures = [pool.submit(run, item) for item in items]
        wait(futures, timeout=budget_s)
    finally:
        stop.set()  # calls still running are interrupted; no result is taken after this
        pool.shutdown(wait=False, cancel_futures=True)
    with lock:
        for item in items:
            if item.session_id not in summaries and item.session_id not in failures:
                failures[item.session_id] = f"not summarised within {budget_s:g} s"
        return dict(summaries), dict(failures)

"""Daemon threads of the memory manager: a provider call bounded by a timeout, on a new
thread or on the provider's lane. A call left behind at its timeout keeps running on its
daemon thread, which never keeps the process alive at exit."""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from typing import Any

log = logging.getLogger("hermes_agent.agent.memory")


class Lane:
    """One daemon thread running a provider's in-turn calls one at a time (cheaper per turn
    than a thread per call)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._jobs: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None

    def submit(self, job: Callable[[], None]) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, daemon=True,
                                            name=f"hermes-memory:{self.name}")
            self._thread.start()
        self._jobs.put(job)

    def _loop(self) -> None:
        while True:
            self._jobs.get()()


def _spawn(job: Callable[[], None]) -> None:
    threading.Thread(target=job, name="hermes-memory-call", daemon=True).start()


def bounded(fn: Callable[[], Any], timeout: float, label: str, lane: Lane | None = None,
            cancel: Any = None) -> tuple[bool, Any]:
    """Run ``fn`` on ``lane`` (else a new daemon thread); ``(True, result)``, or ``(False,
    None)`` when it raised, did not finish within ``timeout`` seconds or ``cancel`` (a
    :class:`~hermes_agent.api.CancelToken`, the turn's interrupt) was set first (logged; the
    thread is left to finish)."""
    box: dict[str, Any] = {}
    wake = threading.Event()

    def run() -> None:
        try:
            box["result"] = fn()
        except Exception:
            log.warning("memory provider call %s failed", label, exc_info=True)
            box["failed"] = True
        finally:
            box["done"] = True
            wake.set()

    on_cancel = getattr(cancel, "on_cancel", None)
    remove = on_cancel(wake.set) if callable(on_cancel) else None
    try:
        (lane.submit if lane is not None else _spawn)(run)
        wake.wait(timeout)
    finally:
        if callable(remove):
            remove()
    if not box.get("done"):
        if cancel is not None and cancel.is_set():
            log.info("memory provider call %s left behind: the turn was interrupted", label)
        else:
            log.warning("memory provider call %s did not finish within %.1f s; going on "
                        "without it", label, timeout)
        return False, None
    return "failed" not in box, box.get("result")

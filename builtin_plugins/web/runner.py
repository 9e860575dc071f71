"""One backend call under the web tools' rules: a time cap, one short retry when rate
limited, and ``web.fallback`` tried in order only when the user wrote it."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from hermes_agent.api import WebBackend, WebError

from .failure import Failure
from .selection import candidates, canonical, find_backend
from .settings import WebSettings

if TYPE_CHECKING:
    from hermes_agent import Kernel

T = TypeVar("T")
#: kinds that no other backend would fix: a refused URL, the user's interrupt
NO_FALLBACK = frozenset({"refused", "interrupted"})


def call_in_time(fn: Callable[[], T], timeout: float, name: str,
                 interrupt: threading.Event | None = None) -> T:
    """``fn()`` on a daemon thread, given up after ``timeout`` seconds or when ``interrupt``
    is set (the thread is left to finish on its own: a backend cannot be cancelled)."""
    box: dict[str, Any] = {}
    done = threading.Event()

    def run() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # handed to the caller's thread
            box["error"] = exc
        finally:
            done.set()

    threading.Thread(target=run, name=f"web-{name}", daemon=True).start()
    deadline = time.monotonic() + timeout
    while not done.wait(min(0.1, max(0.0, deadline - time.monotonic()))):
        if interrupt is not None and interrupt.is_set():
            raise Failure(f"the call to web backend {name!r} was interrupted by the user.",
                          "interrupted", backend=name)
        if time.monotonic() >= deadline:
            raise Failure(f"web backend {name!r} did not answer within {timeout:g} s; try "
                          "again, or raise web.timeout in config.yaml if the backend is slow.",
                          "timeout", backend=name)
    if "error" in box:
        raise box["error"]
    return box["value"]  # type: ignore[no-any-return]


def call_once(backend: WebBackend, op: Callable[[WebBackend], T], settings: WebSettings,
              interrupt: threading.Event | None = None) -> T:
    """``op(backend)``, retried once after a short Retry-After; errors become Failures."""
    name = backend.name
    for attempt in (1, 2):
        try:
            return call_in_time(lambda: op(backend), settings.timeout, name, interrupt)
        except Failure:
            raise
        except WebError as exc:
            wait = exc.retry_after
            if (exc.kind == "rate_limited" and attempt == 1 and wait is not None
                    and 0 <= wait <= settings.retry_wait_max):
                if (interrupt or threading.Event()).wait(wait):  # set: the user interrupted
                    raise Failure(f"the call to web backend {name!r} was interrupted by the "
                                  "user.", "interrupted", backend=name) from exc
                continue
            raise Failure.from_web_error(exc, name) from exc
        except Exception as exc:  # a backend's bug: reported, not raised into the agent
            raise Failure(f"web backend {name!r} failed with {type(exc).__name__}: {exc}. "
                          "This is a bug of the backend plugin; report it, or choose another "
                          "backend.", "backend_error", backend=name) from exc
    raise AssertionError("unreachable")


def run_selected(kernel: Kernel, settings: WebSettings, capability: str,
                 op: Callable[[WebBackend], T],
                 interrupt: threading.Event | None = None) -> tuple[str, T, list[dict[str, Any]]]:
    """``(answering backend's name, op's value, notes of the fallbacks' predecessors that failed)``;
    a :class:`Failure` when the selected backend (and every listed fallback) fails."""
    primary, key, fallbacks = candidates(kernel, settings, capability)
    tried: list[dict[str, Any]] = []
    for name in [primary, *fallbacks]:
        where = key if name == primary else "web.fallback"
        try:
            backend = find_backend(kernel, name, where, capability)
            # the backend that answered, by our name (an alias such as brave-free resolved)
            return canonical(kernel, name), call_once(backend, op, settings, interrupt), tried
        except Failure as failure:
            failure.backend = failure.backend or name
            if not fallbacks or failure.kind in NO_FALLBACK:
                failure.tried = tried
                raise
            tried.append(failure.note())
    first = tried[0]
    raise Failure("every web backend failed: " + "; ".join(
        f"{t['backend']}: {t['error']}" for t in tried), str(first["kind"]),
        backend=primary, tried=tried)

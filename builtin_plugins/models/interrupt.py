"""Interrupting a model call that runs on the caller's own thread.

A blocked socket read cannot be stopped by closing the response from another thread (the
reader keeps waiting until data or the timeout arrives); shutting the socket down can. So
the SDK clients' connection pools hand out *tracked* network streams (:mod:`.nettrack`):
before every read or write on a thread that is running an interruptible call, the stream
records itself on that call's :class:`CallGuard` and checks the token. Setting a
:class:`~.types.CancelToken` then shuts the recorded socket down, which wakes the blocked
read at once (waiting for the response headers as much as reading a stream); the SDK raises
a connection error that :class:`~.client.ModelClient` reports as ``RequestInterrupted``.
A plain :class:`threading.Event` has no callback, so tracked reads poll it every
:data:`POLL_SECONDS` instead.

No extra thread is involved: after an interrupt nothing is left running.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from hermes_agent.api import CancelToken

POLL_SECONDS = 0.05
INTERRUPTED = "the model call was interrupted"
_local = threading.local()


class CallGuard:
    """One interruptible call on the current thread (use as a context manager).

    ``stream`` is the tracked network stream the call last used; ``abort`` (run by the
    token, from any thread) shuts it down and runs the closers custom transports registered.
    """

    __slots__ = ("token", "polled", "stream", "_closers", "_done", "_lock", "_previous",
                 "_remove")

    def __init__(self, token: threading.Event):
        self.token = token
        self.polled = not isinstance(token, CancelToken)
        self.stream: Any = None
        self._closers: list[Callable[[], None]] = []
        self._done = False
        self._lock = threading.Lock()
        self._previous: CallGuard | None = None
        self._remove: Callable[[], None] | None = None

    def __enter__(self) -> "CallGuard":
        self._previous = getattr(_local, "guard", None)
        _local.guard = self
        if not self.polled:
            self._remove = self.token.on_cancel(self.abort)  # type: ignore[attr-defined]
        return self

    def __exit__(self, *exc: Any) -> None:
        with self._lock:
            self._done = True  # a late abort must not touch a connection back in the pool
        if self._remove is not None:
            self._remove()
        _local.guard = self._previous

    def add_closer(self, closer: Callable[[], None]) -> None:
        """Run ``closer`` on interrupt (for transports that do their own I/O)."""
        with self._lock:
            if not self._done:
                self._closers.append(closer)
        if self.token.is_set():
            self.abort()

    def abort(self) -> None:
        """Shut down the call's connection and run the registered closers (any thread)."""
        with self._lock:
            if self._done:
                return
            stream, closers = self.stream, list(self._closers)
            if stream is not None:
                stream.abort()
        for closer in closers:
            try:
                closer()
            except Exception:  # closing something already closed is not an error here
                pass

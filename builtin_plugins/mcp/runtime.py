"""The one background event loop that owns every MCP session.

The SDK's sessions are async and must be entered and left in the same task (anyio task
groups), so each server lives in one long-running task on this loop; synchronous callers
(tool handlers, the CLI) submit coroutines with :meth:`Runtime.run` and wait with a bound.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class CallTimeout(Exception):
    """A coroutine submitted to the runtime did not finish in time (it was cancelled)."""


class Runtime:
    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._serve, name="hermes-mcp", daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    @property
    def alive(self) -> bool:
        return self._thread.is_alive() and not self.loop.is_closed()

    def run(self, coro: Coroutine[Any, Any, T], timeout: float,
            interrupt: threading.Event | None = None) -> T:
        """Run ``coro`` on the loop and wait at most ``timeout`` seconds (or until
        ``interrupt`` is set): then it is cancelled and :class:`CallTimeout` (or
        ``InterruptedError``) raised."""
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            if interrupt is None:
                return future.result(timeout)
            remaining = timeout
            while True:  # wake up now and then to notice an interrupt
                step = min(remaining, 0.1)
                try:
                    return future.result(step)
                except concurrent.futures.TimeoutError:
                    remaining -= step
                    if interrupt.is_set():
                        future.cancel()
                        raise InterruptedError("interrupted by the user") from None
                    if remaining <= 0:
                        raise
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise CallTimeout(f"no answer within {timeout:g} s") from None

    def stop(self, timeout: float = 5.0) -> None:
        if not self.alive:
            return
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout)
        if not self._thread.is_alive():
            self.loop.close()

"""A circuit breaker: after ``threshold`` failed calls in a row, calls are refused for
``cooldown`` seconds, so a Mem0 that is down costs a turn nothing instead of a timeout.

After the pause one trial call goes through ("half open"): a success closes the breaker, a
failure pauses it again at once.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


class CircuitBreaker:
    def __init__(self, threshold: int = 5, cooldown: float = 60.0,
                 clock: Callable[[], float] = time.monotonic):
        self.threshold = max(1, threshold)
        self.cooldown = cooldown
        self._clock = clock
        self._lock = threading.Lock()
        self._failures = 0
        self._open_until: float | None = None
        self._trial = False

    @property
    def is_open(self) -> bool:
        """Whether calls are refused right now."""
        return self.remaining() > 0

    def remaining(self) -> float:
        """Seconds until a trial call is let through (0: calls may go)."""
        with self._lock:
            if self._open_until is None:
                return 0.0
            return max(0.0, self._open_until - self._clock())

    def allow(self) -> bool:
        """Whether a call may go now; the first call after the pause is the trial."""
        with self._lock:
            if self._open_until is None:
                return True
            if self._clock() < self._open_until:
                return False
            self._trial = True
            return True

    def success(self) -> None:
        with self._lock:
            self._failures, self._open_until, self._trial = 0, None, False

    def failure(self) -> bool:
        """Count a failed call; True when this one opened (or re-opened) the breaker."""
        with self._lock:
            self._failures += 1
            if self._trial or self._failures >= self.threshold:
                self._open_until = self._clock() + self.cooldown
                self._trial = False
                return True
            return False

    @property
    def consecutive_failures(self) -> int:
        with self._lock:
            return self._failures

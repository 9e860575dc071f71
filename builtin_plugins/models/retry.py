"""Retry policy: jittered exponential backoff that honours ``Retry-After``."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class RetryPolicy:
    """``max_retries`` retries after the first attempt. Delay for retry ``n`` (1-based):
    ``min(base_delay * 2**(n-1), max_delay)`` plus up to ``jitter`` of that at random; a
    server's ``Retry-After`` replaces it (capped at ``retry_after_cap``)."""

    max_retries: int = 3
    base_delay: float = 2.0
    max_delay: float = 60.0
    jitter: float = 0.5
    retry_after_cap: float = 600.0

    def delay(self, retry: int, retry_after: float | None = None) -> float:
        if retry_after is not None:
            return min(max(0.0, retry_after), self.retry_after_cap)
        base = min(self.base_delay * 2 ** max(0, retry - 1), self.max_delay)
        return base + random.uniform(0, self.jitter * base)

    @classmethod
    def from_config(cls, config: Any) -> "RetryPolicy":
        """The policy config.yaml asks for: ``model.max_retries`` and ``model.retry_delay``
        (seconds before the first retry), defaults for what is not set."""
        values: dict[str, Any] = {}
        retries, delay = config.get("model.max_retries"), config.get("model.retry_delay")
        if retries not in (None, ""):
            values["max_retries"] = int(retries)
        if delay not in (None, ""):
            values["base_delay"] = float(delay)
        return cls(**values)

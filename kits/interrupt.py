"""Owner: the builtin plugin `agent`.

Which threads run a tool the user interrupted: the agent marks them, handlers ask.

The original's ``tools.interrupt.is_interrupted()`` contract, kept for the plugins written
for it; the compat plugin serves it under that module path.
"""

from __future__ import annotations

import threading

__all__ = ["is_interrupted", "set_interrupted"]

_interrupted: set[int] = set()
_lock = threading.Lock()


def set_interrupted(thread_id: int, interrupted: bool = True) -> None:
    """Mark (or clear) an interrupt for the thread running a tool; the agent calls this."""
    with _lock:
        (_interrupted.add if interrupted else _interrupted.discard)(thread_id)


def is_interrupted() -> bool:
    """Whether the user interrupted the tool running on the current thread."""
    with _lock:
        return threading.get_ident() in _interrupted

"""Shared timing helpers for the in-process hook-dispatch snippets.

``hook_dispatch_original.py`` and ``hook_dispatch_ours.py`` are run with each
implementation's own interpreter; both import this module (it sits next to
them, so it is on ``sys.path[0]``) so that the listener callbacks and the
timing loop are byte-for-byte identical on both sides.

Stdlib only: it must import cleanly in either virtualenv.
"""

from __future__ import annotations

import argparse
import json
import statistics
import timeit
from collections.abc import Callable
from typing import Any

HOOK_NAME = "post_tool_call"

# The exact keyword arguments the original passes at its real call site
# (``model_tools._emit_post_tool_call_hook`` in hermes-agent 0.19.0), and the
# ones our ``post_tool_call`` hookspec takes. Both snippets dispatch with these.
DISPATCH_KWARGS_SRC = (
    'tool_name="t", args={}, result="{}", task_id="x", session_id="s", '
    'tool_call_id="c", turn_id="u", api_request_id="a", duration_ms=1, '
    'status="ok", error_type=None, error_message=None, middleware_trace=[]'
)

# Set to a list during the one verification dispatch; ``None`` while timing.
_TRACE: list[int] | None = None


def make_listeners(count: int) -> list[Callable[..., None]]:
    """Return *count* distinct no-op ``post_tool_call`` listeners."""

    def make(index: int) -> Callable[..., None]:
        def on_post_tool_call(tool_name: str, args: Any, result: Any, task_id: str, **kwargs: Any) -> None:
            if _TRACE is not None:
                _TRACE.append(index)

        on_post_tool_call.__name__ = f"on_post_tool_call_{index:02d}"
        return on_post_tool_call

    return [make(i) for i in range(1, count + 1)]


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Time one hook dispatch.")
    parser.add_argument("--listeners", type=int, default=20)
    parser.add_argument("--batches", type=int, default=7, help="timing batches")
    parser.add_argument(
        "--min-batch-seconds",
        type=float,
        default=0.2,
        help="each batch runs enough dispatches to last at least this long",
    )
    return parser.parse_args()


def time_dispatch(
    stmt: str,
    namespace: dict[str, Any],
    *,
    listeners: int,
    batches: int,
    min_batch_seconds: float,
) -> dict[str, Any]:
    """Time *stmt* (one dispatch) and return microseconds per dispatch.

    The statement is compiled straight into timeit's loop (no wrapper
    lambda), so what is measured is the dispatch call itself, including
    building its keyword arguments, as at a real call site.
    """
    global _TRACE
    _TRACE = []
    exec(stmt, dict(namespace))  # noqa: S102 - our own constant statement
    called = len(_TRACE)
    _TRACE = None
    if called != listeners:
        raise SystemExit(f"verification dispatch reached {called} listeners, expected {listeners}")

    timer = timeit.Timer(stmt, globals=dict(namespace))
    number = 1
    while True:  # like Timer.autorange(), but with a configurable floor
        if timer.timeit(number) >= min_batch_seconds:
            break
        number *= 2
    per_call_us = [timer.timeit(number) / number * 1e6 for _ in range(batches)]
    return {
        "hook": HOOK_NAME,
        "listeners": listeners,
        "dispatches_per_batch": number,
        "batches_us": per_call_us,
        "median_us": statistics.median(per_call_us),
        "min_us": min(per_call_us),
    }


def emit(result: dict[str, Any]) -> None:
    """Print the result as the last stdout line (the driver parses it)."""
    print(json.dumps(result), flush=True)

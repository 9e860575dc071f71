"""Calling a context engine's methods: engines written for the original's ``ContextEngine``
work unchanged, so optional arguments a method does not accept are left out."""

from __future__ import annotations

import inspect
from typing import Any


def call_filtered(method: Any, *args: Any, **optional: Any) -> Any:
    """``method(*args, **optional)`` without the optional arguments its signature lacks."""
    try:
        parameters = inspect.signature(method).parameters
    except (TypeError, ValueError):
        return method(*args, **optional)
    if not any(p.kind is p.VAR_KEYWORD for p in parameters.values()):
        optional = {k: v for k, v in optional.items() if k in parameters}
    return method(*args, **optional)

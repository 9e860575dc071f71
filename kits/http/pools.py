"""Owner: the builtin plugin `models`.

The connection pools of an ``httpx2.Client``, for what httpx offers no setting for: the
network backend that opens their connections (tracked streams for interrupts, host name
lookups within the connect timeout)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["wrap_network_backends"]


def wrap_network_backends(client: Any, wrap: Callable[[Any], Any]) -> int:
    """Replace the network backend of each connection pool of an ``httpx2.Client`` (its own
    transport's and those of the proxies it took from the environment) with
    ``wrap(backend)``: httpx has no setting for it. Returns how many pools were wrapped (0:
    this httpx2 version keeps them elsewhere)."""
    wrapped = 0
    for transport in (getattr(client, "_transport", None),
                      *(getattr(client, "_mounts", None) or {}).values()):
        pool = getattr(transport, "_pool", None)
        backend = getattr(pool, "_network_backend", None)
        if backend is not None:
            pool._network_backend = wrap(backend)  # type: ignore[union-attr]
            wrapped += 1
    return wrapped

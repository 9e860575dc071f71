"""Owner: the builtin plugin `web`.

The HTTP kit: the SSRF guards (``net``: only http(s), only public addresses unless allowed),
the SSRF-safe fetcher (``fetcher``: pinned addresses, re-checked redirects, caps), the
JSON-over-HTTP client web backends share (``client``: retries, Retry-After, masked errors),
the base class of a backend over one service's JSON API (``backend``) and the network
backends of an httpx2 client's connection pools (``pools``). Names load lazily (PEP 562):
importing ``net`` does not import httpx2. Not part of the contract docs/api.md locks
(docs/kits.md).
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS: dict[str, str] = {
    **dict.fromkeys(("CheckedURL", "check_url", "is_public_address", "Resolver",
                     "system_resolve"), "net"),
    **dict.fromkeys(("fetch", "Fetched", "is_text_type"), "fetcher"),
    **dict.fromkeys(("WebService", "WebHTTP", "retry_after_seconds", "http_options"), "client"),
    "HTTPWebBackend": "backend",
    "wrap_network_backends": "pools",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__

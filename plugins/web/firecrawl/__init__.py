"""Firecrawl (https://firecrawl.dev) as a web backend, ``web.backend: firecrawl``: search
(``POST /v2/search``) and extraction (``POST /v2/scrape``, markdown) over httpx, hosted or
self-hosted (``FIRECRAWL_API_URL``). See docs/web.md."""

from __future__ import annotations

from typing import Any

from .backend import FirecrawlBackend

__all__ = ["FirecrawlBackend", "register"]


def register(ctx: Any) -> None:
    kernel = ctx.kernel
    ctx.register_web_search_provider(FirecrawlBackend(settings=ctx.config,
                                                      env=lambda: kernel.env))

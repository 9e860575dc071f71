"""SearXNG (https://docs.searxng.org) as a web search backend: ``web.backend: searxng``.

Queries a self-hosted instance's JSON API at ``SEARXNG_URL``; no key. See docs/web.md.
"""

from __future__ import annotations

from typing import Any

from .backend import SearXNGBackend

__all__ = ["SearXNGBackend", "register"]


def register(ctx: Any) -> None:
    ctx.register_web_search_provider(SearXNGBackend(ctx.kernel.env, ctx.config))

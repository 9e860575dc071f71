"""DuckDuckGo search through the maintained ``ddgs`` package (``web.backend: ddgs``): no key,
search only. See docs/web.md."""

from __future__ import annotations

from typing import Any

from .backend import DDGSBackend

__all__ = ["DDGSBackend", "register"]


def register(ctx: Any) -> None:
    ctx.register_web_search_provider(DDGSBackend(settings=ctx.config))

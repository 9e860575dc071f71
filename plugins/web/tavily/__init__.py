"""Tavily (https://tavily.com) as a web search and extraction backend: ``web.backend:
tavily``. Needs ``TAVILY_API_KEY``; see docs/web.md."""

from __future__ import annotations

from typing import Any

from .backend import TavilyBackend

__all__ = ["TavilyBackend", "register"]


def register(ctx: Any) -> None:
    ctx.register_web_search_provider(TavilyBackend(ctx.kernel.env, ctx.config))

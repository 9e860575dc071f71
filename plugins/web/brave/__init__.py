"""Brave Search (https://brave.com/search/api/) as a web search backend: ``web.backend:
brave``. Needs ``BRAVE_SEARCH_API_KEY``; see docs/web.md."""

from __future__ import annotations

from typing import Any

from .backend import BraveBackend

__all__ = ["BraveBackend", "register"]


def register(ctx: Any) -> None:
    ctx.register_web_search_provider(BraveBackend(ctx.kernel.env, ctx.config))

"""Exa (https://exa.ai) as a web search and extraction backend: ``web.backend: exa``.
Needs ``EXA_API_KEY``; see docs/web.md."""

from __future__ import annotations

from typing import Any

from .backend import ExaBackend

__all__ = ["ExaBackend", "register"]


def register(ctx: Any) -> None:
    ctx.register_web_search_provider(ExaBackend(ctx.kernel.env, ctx.config))

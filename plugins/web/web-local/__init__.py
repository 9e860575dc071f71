"""Local page extraction (``web.extract_backend: local``): pages fetched with the SSRF-safe
fetcher of ``hermes_agent.api`` and converted to markdown by trafilatura; no key, no service.
Search is not offered. See docs/web.md."""

from __future__ import annotations

from typing import Any

from .backend import LocalExtractor

__all__ = ["LocalExtractor", "register"]


def register(ctx: Any) -> None:
    kernel = ctx.kernel
    ctx.register_web_search_provider(LocalExtractor(
        settings=ctx.config, allow_private=lambda: bool(
            kernel.config.get("web.allow_private_networks", False))))

"""Mem0 (https://mem0.ai) as hermes' external memory: ``memory.provider: mem0``.

Recalls memories relevant to each message, stores each finished turn, mirrors the builtin
memory tool and offers ``mem0_search``, ``mem0_add`` and ``mem0_forget``. Talks to the Mem0
Platform REST API (or a self-hosted server, ``MEM0_HOST``) over httpx; see docs/memory.md.
"""

from __future__ import annotations

from typing import Any

from .provider import Mem0Provider

__all__ = ["Mem0Provider", "register"]


def register(ctx: Any) -> None:
    ctx.register_memory_provider(Mem0Provider(ctx.config, ctx.kernel.env))

"""Bundled memory provider ``local``: facts about the user in a local SQLite file, no service.

Turn it on with ``memory.provider: local``. Facts are extracted from the user's messages by
rules (:mod:`.extract`), stored in ``$HERMES_HOME/memories/local.db`` (:mod:`.store`),
recalled into each turn by BM25 and recency (:mod:`.query`, :mod:`.ranking`), and offered as
tools (:mod:`.tools`) and as ``hermes facts`` (:mod:`.cli`). docs/memory.md describes it.
"""

from __future__ import annotations

from typing import Any


def register(ctx: Any) -> None:
    from hermes_agent.api import INJECTION_SCAN

    from .provider import LocalMemoryProvider

    kernel = ctx.kernel
    ctx.register_memory_provider(LocalMemoryProvider(
        ctx.config, scanner=lambda: kernel.service(INJECTION_SCAN)))

"""Builtin plugin: the default context engine ``compressor`` in the ``context_engine`` slot
(``context.engine``, default ``compressor``). The agent copies the registered engine for
each conversation and asks it, before every model call, whether to compress (docs/context.md).
"""

from __future__ import annotations

from typing import Any


def register(ctx: Any) -> None:
    from .compressor import Compressor

    ctx.register_context_engine(Compressor(ctx.kernel))

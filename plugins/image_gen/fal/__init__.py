"""fal.ai as the ``fal`` image generation provider (``image_gen.provider: fal``,
``FAL_KEY``)."""

from __future__ import annotations

from typing import Any

from .client import FalImages

__all__ = ["FalImages", "register"]


def register(ctx: Any) -> None:
    ctx.register_image_gen_provider(FalImages(ctx.kernel))

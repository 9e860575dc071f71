"""The OpenAI images API as the ``openai`` image generation provider
(``image_gen.provider: openai``; ``image_gen.openai.model``, ``base_url``, ``quality``)."""

from __future__ import annotations

from typing import Any

from .images import OpenAIImages

__all__ = ["OpenAIImages", "register"]


def register(ctx: Any) -> None:
    ctx.register_image_gen_provider(OpenAIImages(ctx.kernel))

"""The model's context window in tokens: ``model.context_length`` when set, else what the
provider's profile lists for the model (``context_lengths``), else a table
of model families (matched on the id without a ``vendor/`` prefix, longest family first),
else a conservative default."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

DEFAULT_WINDOW = 128_000

FAMILIES: dict[str, int] = {
    "gpt-5": 400_000, "gpt-4.1": 1_047_576, "gpt-4o": 128_000, "o3": 200_000,
    "o4-mini": 200_000, "claude": 200_000, "gemini-2.5": 1_048_576, "gemini": 1_000_000,
    "deepseek": 128_000, "qwen3-coder": 262_144, "qwen": 131_072, "kimi-k2": 262_144,
    "glm-4.6": 200_000, "glm": 128_000, "grok-4": 256_000, "llama-4": 1_000_000,
    "mistral-large": 128_000, "hermes-4": 131_072,
}


def context_window(model: str, config: Any, profiles: Iterable[Any] = ()) -> int:
    """``profiles``: the profiles to ask first, in order (the active provider's first)."""
    configured = config.get("model.context_length") if config is not None else None
    if isinstance(configured, int) and configured > 0:
        return configured
    for profile in profiles:
        listed = getattr(profile, "context_lengths", {}).get(model)
        if listed:
            return int(listed)
    name = model.rsplit("/", 1)[-1].lower()
    for family in sorted(FAMILIES, key=len, reverse=True):
        if name.startswith(family):
            return FAMILIES[family]
    return DEFAULT_WINDOW

"""Estimated cost of a call from a built-in price table.

Prices are US dollars per million tokens: ``(input, output, cache_read, cache_write)``;
``None`` in a bucket means that price is not known. A call whose non-zero buckets are not
all priced has cost status ``unknown`` (amount ``None``), never zero. Local servers cost
nothing (status ``included``). A price the provider's profile lists for the model comes
first (the catalogue's rows); then this table, where models are matched without a ``vendor/`` prefix (OpenRouter
and Nous ids) and without a date suffix.
"""

from __future__ import annotations

import re

from hermes_agent.api import Cost, ProviderProfile, Usage

PRICING_VERSION = "2025-10-01"

Price = tuple[float | None, float | None, float | None, float | None]

PRICES: dict[str, Price] = {
    # OpenAI (public list prices)
    "gpt-5": (1.25, 10.0, 0.125, None),
    "gpt-5-mini": (0.25, 2.0, 0.025, None),
    "gpt-5-nano": (0.05, 0.40, 0.005, None),
    "gpt-4.1": (2.0, 8.0, 0.50, None),
    "gpt-4.1-mini": (0.40, 1.60, 0.10, None),
    "gpt-4.1-nano": (0.10, 0.40, 0.025, None),
    "gpt-4o": (2.50, 10.0, 1.25, None),
    "gpt-4o-mini": (0.15, 0.60, 0.075, None),
    "o3": (2.0, 8.0, 0.50, None),
    "o4-mini": (1.10, 4.40, 0.275, None),
    # Anthropic (cache write = 5-minute write price)
    "claude-opus-4-1": (15.0, 75.0, 1.50, 18.75),
    "claude-opus-4": (15.0, 75.0, 1.50, 18.75),
    "claude-sonnet-4-5": (3.0, 15.0, 0.30, 3.75),
    "claude-sonnet-4": (3.0, 15.0, 0.30, 3.75),
    "claude-3-7-sonnet": (3.0, 15.0, 0.30, 3.75),
    "claude-haiku-4-5": (1.0, 5.0, 0.10, 1.25),
    "claude-3-5-haiku": (0.80, 4.0, 0.08, 1.0),
    # Google
    "gemini-2.5-pro": (1.25, 10.0, 0.31, None),
    "gemini-2.5-flash": (0.30, 2.50, 0.075, None),
    "gemini-2.5-flash-lite": (0.10, 0.40, 0.025, None),
    # DeepSeek
    "deepseek-chat": (0.28, 0.42, 0.028, None),
    "deepseek-reasoner": (0.28, 0.42, 0.028, None),
}

_DATE = re.compile(r"-(20\d{6}|\d{4}-\d{2}-\d{2}|latest)$")


def price_for(model: str) -> Price | None:
    bare = model.rsplit("/", 1)[-1].lower()
    stripped = _DATE.sub("", bare)
    for candidate in (bare, stripped, stripped.replace(".", "-")):
        if candidate in PRICES:
            return PRICES[candidate]
    return None


def estimate_cost(profile: ProviderProfile | None, model: str, usage: Usage) -> Cost:
    """The estimated cost of one call (see the module docstring for the rules)."""
    if profile is not None and profile.local:
        return Cost(0.0, "included", "local server", PRICING_VERSION)
    price = (profile.prices.get(model) if profile is not None else None) or price_for(model)
    if price is None:
        return Cost(None, "unknown", f"no price for {model!r}", PRICING_VERSION)
    buckets = (usage.input_tokens, usage.output_tokens, usage.cache_read_tokens,
               usage.cache_write_tokens)
    total = 0.0
    for tokens, per_million in zip(buckets, price):
        if not tokens:
            continue
        if per_million is None:
            return Cost(None, "unknown", f"no cache price for {model!r}", PRICING_VERSION)
        total += tokens * per_million / 1_000_000
    return Cost(round(total, 8), "estimated", f"pricing table {PRICING_VERSION}", PRICING_VERSION)

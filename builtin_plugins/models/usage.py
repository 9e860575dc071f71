"""Map each wire format's usage block to :class:`Usage` (uncached input, output, cache read,
cache write, reasoning), and estimate the counts when a server reports none."""

from __future__ import annotations

import json
from typing import Any

from hermes_agent.api import ChatResponse, Usage
from hermes_agent.kits.tokens import estimate_text_tokens

from .runtime import attr


def _int(value: Any) -> int:
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        return 0


def chat_usage(raw: Any) -> Usage:
    """Chat Completions: ``prompt_tokens`` includes cached tokens
    (``prompt_tokens_details.cached_tokens``; DeepSeek: ``prompt_cache_hit_tokens``)."""
    if raw is None:
        return Usage()
    prompt = _int(attr(raw, "prompt_tokens"))
    details = attr(raw, "prompt_tokens_details")
    cached = _int(attr(details, "cached_tokens")) or _int(attr(raw, "prompt_cache_hit_tokens")) \
        or _int(attr(raw, "cache_read_input_tokens"))
    written = _int(attr(details, "cache_write_tokens")) or _int(attr(raw, "cache_creation_input_tokens"))
    reasoning = _int(attr(attr(raw, "completion_tokens_details"), "reasoning_tokens"))
    return Usage(max(0, prompt - cached - written), _int(attr(raw, "completion_tokens")),
                 cached, written, reasoning)


def anthropic_usage(raw: Any) -> Usage:
    """Anthropic Messages: ``input_tokens`` already excludes the cache buckets."""
    if raw is None:
        return Usage()
    return Usage(_int(attr(raw, "input_tokens")), _int(attr(raw, "output_tokens")),
                 _int(attr(raw, "cache_read_input_tokens")),
                 _int(attr(raw, "cache_creation_input_tokens")), 0)


def responses_usage(raw: Any) -> Usage:
    """Responses: ``input_tokens`` includes ``input_tokens_details.cached_tokens``."""
    if raw is None:
        return Usage()
    total_in = _int(attr(raw, "input_tokens"))
    cached = _int(attr(attr(raw, "input_tokens_details"), "cached_tokens"))
    reasoning = _int(attr(attr(raw, "output_tokens_details"), "reasoning_tokens"))
    return Usage(max(0, total_in - cached), _int(attr(raw, "output_tokens")), cached, 0, reasoning)


# the SDK arguments that carry what the model reads (per API mode)
_SENT_KEYS = ("messages", "input", "system", "instructions", "tools")


def estimate_usage(kwargs: dict[str, Any], response: ChatResponse,
                   streamed: str | None = None) -> Usage:
    """Counts estimated from the request (``kwargs``) and the reply (``streamed``: all the
    text the server sent, when more than ``response.content``), marked ``estimated``."""
    sent = json.dumps([kwargs[k] for k in _SENT_KEYS if k in kwargs], ensure_ascii=False,
                      default=str)
    if streamed is None:
        streamed = "".join([response.content, response.reasoning or "",
                            *(c.name + c.arguments for c in response.tool_calls)])
    return Usage(input_tokens=estimate_text_tokens(sent), output_tokens=estimate_text_tokens(streamed), estimated=True)

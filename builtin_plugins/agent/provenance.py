"""Where the text in a conversation came from, and whether the conversation is tainted.

Every message that enters the model's context is trusted (the user's own messages, config,
the model's answers to them) unless it carries ``"provenance": {"trust": "untrusted",
"source": ...}``: a tool result from a handler marked with ``untrusted_output`` (web pages,
MCP servers), a gateway message from someone other than the owner, or text written while the
session was tainted (a compression summary: ``tainted-write``). The mark is stored with the
message, so a resumed session knows it. A session is tainted from its first untrusted
message on; its untrusted tool results reach the model fenced with the session's nonce
(:mod:`hermes_agent.kits.fence`). docs/security.md.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from hermes_agent.kits.fence import fence

UNTRUSTED = "untrusted"
TAINTED_WRITE = "tainted-write"
NONCE_KEY = "fence_nonce"  # in the session's model_config JSON


def untrusted(source: str) -> dict[str, str]:
    """The provenance of text from ``source``."""
    return {"trust": UNTRUSTED, "source": source}


def source_of(message: dict[str, Any]) -> str | None:
    """The untrusted source of ``message`` (None: trusted)."""
    mark = message.get("provenance")
    if isinstance(mark, dict) and mark.get("trust") == UNTRUSTED:
        return str(mark.get("source") or "unknown")
    return None


def first_untrusted(messages: Iterable[dict[str, Any]]) -> str | None:
    """The source of the first untrusted message (None: the messages are all trusted)."""
    for message in messages:
        source = source_of(message)
        if source is not None:
            return source
    return None


def fenced(result: str, source: str, nonce: str) -> str:
    """A tool result as the model sees it: inside the session's fence, its source named."""
    return fence(result, source, nonce)


def user_and_untrusted_text(messages: Iterable[dict[str, Any]]) -> str:
    """What the user wrote and what untrusted sources wrote: a URL found here was not made up
    by the model (it may be fetched; one made up may carry data out)."""
    parts = []
    for message in messages:
        if message.get("role") == "user" or source_of(message) is not None:
            content = message.get("content")
            parts.append(content if isinstance(content, str) else str(content or ""))
    return "\n".join(parts)


def mark_written(messages: list[dict[str, Any]], old: list[dict[str, Any]]) -> None:
    """Compression while tainted: the messages the engine wrote (a summary) are untrusted,
    as what they summarise was."""
    kept = {id(message) for message in old}
    for message in messages:
        if id(message) not in kept and source_of(message) is None:
            message["provenance"] = untrusted(TAINTED_WRITE)

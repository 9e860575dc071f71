"""Scripted replies for :class:`FakeLLMServer`. One reply is written in whichever wire format
the request arrived in (Chat Completions, Anthropic Messages or Responses), streamed as SSE
when the request asked for ``stream``.

    server.script(reply_text("Hello"),
                  reply_tool_call("read_file", {"path": "a.txt"}),
                  reply_error(429, "slow down", retry_after=1))
"""

from __future__ import annotations

import itertools
import threading
from dataclasses import dataclass, field
from typing import Any

_ids = itertools.count(1)


@dataclass
class FakeToolCall:
    name: str
    arguments: dict[str, Any]
    id: str = ""

    def __post_init__(self) -> None:
        self.id = self.id or f"call_{next(_ids)}"


@dataclass
class Reply:
    """One scripted answer.

    ``text``: assistant text (streamed in ``chunk_size``-character pieces);
    ``tool_calls``: calls to emit after the text; ``reasoning``: thinking text (Chat:
    ``reasoning_content``; Anthropic: a signed ``thinking`` block; Responses: a reasoning
    item with a summary); ``usage``: ``input_tokens`` (uncached), ``output_tokens``,
    ``cache_read_tokens``, ``cache_write_tokens``, ``reasoning_tokens``;
    ``status`` != 200 makes it an error reply carrying ``error_message`` / ``error_type``;
    ``headers`` are added to the HTTP response (e.g. ``retry-after``); ``delay`` waits before
    answering, and ``hold`` (a ``threading.Event``) until it is set; ``stall`` pauses a stream that long after its second event (for interrupt tests;
    every pause ends when the client hangs up); ``cut_after`` drops the connection part-way:
    a stream after that many server-sent events (no end of stream), a plain reply half-way
    through its body. ``pace`` waits that long between the events of a stream (a long reply
    then takes as long as a real one, and stops when the client hangs up);
    ``report_usage=False`` leaves usage out, as llama.cpp's server does when streaming. In
    ``error_message``, ``{authorization}`` and ``{x-api-key}`` are replaced by the request's
    header (a provider that echoes the key in its error body).
    """

    text: str = ""
    tool_calls: list[FakeToolCall] = field(default_factory=list)
    reasoning: str = ""
    usage: dict[str, int] | None = None
    finish_reason: str | None = None
    status: int = 200
    error_message: str = ""
    error_type: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    hold: threading.Event | None = None
    stall: float = 0.0
    cut_after: int | None = None
    chunk_size: int = 4
    model: str | None = None
    pace: float = 0.0
    report_usage: bool = True

    @property
    def is_error(self) -> bool:
        return self.status >= 400

    def chunks(self) -> list[str]:
        size = max(1, self.chunk_size)
        return [self.text[i:i + size] for i in range(0, len(self.text), size)]

    def token_usage(self, request_chars: int) -> dict[str, int]:
        usage = {"input_tokens": max(1, request_chars // 4),
                 "output_tokens": max(1, len(self.text) // 4 + 8 * len(self.tool_calls)),
                 "cache_read_tokens": 0, "cache_write_tokens": 0, "reasoning_tokens": 0}
        usage.update(self.usage or {})
        return usage

    def finish(self, style: str) -> str:
        """The stop reason in ``style``: ``chat``, ``anthropic`` or ``responses``."""
        if self.finish_reason:
            return self.finish_reason
        if style == "anthropic":
            return "tool_use" if self.tool_calls else "end_turn"
        return "tool_calls" if self.tool_calls else "stop"


def reply_text(text: str, **options: Any) -> Reply:
    """A plain text answer. Options are :class:`Reply` fields (``usage``, ``reasoning``, ...)."""
    return Reply(text=text, **options)


def reply_tool_call(name: str, arguments: dict[str, Any] | None = None, *, id: str = "",
                    text: str = "", **options: Any) -> Reply:
    """An answer asking for one tool call (optionally preceded by ``text``)."""
    return Reply(text=text, tool_calls=[FakeToolCall(name, arguments or {}, id)], **options)


def reply_tool_calls(*calls: tuple[str, dict[str, Any]], text: str = "", **options: Any) -> Reply:
    """An answer asking for several tool calls at once: ``reply_tool_calls(("a", {}), ("b", {}))``."""
    return Reply(text=text, tool_calls=[FakeToolCall(n, a) for n, a in calls], **options)


def reply_error(status: int, message: str = "", *, retry_after: float | None = None,
                error_type: str = "", headers: dict[str, str] | None = None) -> Reply:
    """An HTTP error in the provider's error format. ``retry_after`` sets ``Retry-After``
    (whole seconds) or, for fractions, ``retry-after-ms``."""
    extra = dict(headers or {})
    if retry_after is not None:
        if float(retry_after).is_integer():
            extra["retry-after"] = str(int(retry_after))
        else:
            extra["retry-after-ms"] = str(int(retry_after * 1000))
    return Reply(status=status, error_message=message or f"fake error {status}",
                 error_type=error_type, headers=extra)


def reply_looping(block: str, copies: int = 200, *, intro: str = "", pace: float = 0.002,
                  **options: Any) -> Reply:
    """A degenerate streamed answer: ``intro``, then ``block`` ``copies`` times, paced so it
    would take ``pace`` s per event (a small model stuck repeating one paragraph)."""
    return Reply(text=intro + block * copies, pace=pace, **options)


def reply_stall(text: str, stall: float = 30.0, **options: Any) -> Reply:
    """A streamed answer that stops for ``stall`` seconds after its second server-sent event
    (Chat Completions: after the first text chunk)."""
    return Reply(text=text, stall=stall, **options)


def reply_cut(text: str, after: int = 3, **options: Any) -> Reply:
    """An answer whose connection drops part-way: a stream after ``after`` server-sent events
    (the first is the role or ``message_start`` event, so ``after=1`` cuts before any text),
    a plain reply half-way through its JSON body."""
    return Reply(text=text, cut_after=after, **options)

"""The default context engine: summarise the middle of a conversation that grew too long.

Compression runs in four phases: (1) old tool output outside the kept tail is replaced by a
short note; (2) the cut is placed after the first ``protect_first_n`` messages and before a
tail of at most ``protect_last_n`` messages within ``target_ratio`` of the threshold, never
inside a tool call's group; (3) the auxiliary ``compression`` model writes a structured
summary of the middle, updating the previous summary when there is one; (4) the result is
head + summary + tail. A summariser that fails leaves the messages as they were (the host
warns), and automatic attempts pause for ``failure_cooldown`` seconds or until a compression
succeeds (``force``, i.e. ``/compress``, is never held back by the pause).
"""

from __future__ import annotations

import logging
import threading
import time
from typing import TYPE_CHECKING, Any

from hermes_agent.api import ContextEngine, MODELS
from hermes_agent.kits.tokens import estimate_tokens

from .boundaries import Cut, find_cut, prune_tool_outputs
from .config_schema import CompressionSection
from .summary import summary_message, summary_prompt, summary_text

if TYPE_CHECKING:
    from hermes_agent import Kernel

log = logging.getLogger("hermes_agent.context")
MIN_SUMMARY_TOKENS, MAX_SUMMARY_TOKENS = 600, 4_000


class Compressor(ContextEngine):
    """The ``compressor`` engine; one copy per agent (the host copies the registered one)."""

    name = "compressor"

    def __init__(self, kernel: Kernel, settings: CompressionSection | None = None):
        self.kernel = kernel
        self.settings = settings or CompressionSection.model_validate(
            kernel.config.get("compression") or {})
        self.threshold_percent = self.settings.threshold
        self.protect_first_n = self.settings.protect_first_n
        self.protect_last_n = self.settings.protect_last_n
        self.previous_summary = ""  # carried into the next compression
        self.last_error = ""  # why the latest attempt left the conversation as it was
        self.session_id = ""
        self._paused_until = 0.0

    # --- counters the host reads ----------------------------------------------------------
    def update_from_response(self, usage: dict[str, Any]) -> None:
        self.last_prompt_tokens = int(usage.get("prompt_tokens") or 0)
        self.last_completion_tokens = int(usage.get("completion_tokens") or 0)
        self.last_total_tokens = int(usage.get("total_tokens") or 0)

    def should_compress(self, prompt_tokens: int | None = None) -> bool:
        tokens = self.last_prompt_tokens if prompt_tokens is None else prompt_tokens
        return (self.settings.enabled and self.threshold_tokens > 0
                and tokens >= self.threshold_tokens and time.monotonic() >= self._paused_until)

    def should_compress_preflight(self, messages: list[dict[str, Any]]) -> bool:
        return self.should_compress(estimate_tokens(messages))

    def has_content_to_compress(self, messages: list[dict[str, Any]]) -> bool:
        """Whether the middle holds anything but an earlier summary."""
        cut = self._cut(messages)
        return any(summary_text(m) is None for m in messages[cut.head:cut.tail])

    def on_session_start(self, session_id: str, **kwargs: Any) -> None:
        self.session_id = session_id

    def on_session_reset(self) -> None:
        super().on_session_reset()
        self.previous_summary, self.last_error, self._paused_until = "", "", 0.0

    def get_status(self) -> dict[str, Any]:
        return {**super().get_status(), "context_length": self.context_length,
                "last_error": self.last_error}

    # --- compression ----------------------------------------------------------------------
    def _cut(self, messages: list[dict[str, Any]]) -> Cut:
        budget = int(self.threshold_tokens * self.settings.target_ratio) or 1
        cut = find_cut(messages, protect_first_n=self.protect_first_n,
                       protect_last_n=self.protect_last_n, tail_budget_tokens=budget)
        for index in range(cut.head):  # an earlier summary is carried forward, never kept
            if summary_text(messages[index]) is not None:
                return Cut(index, max(cut.tail, index))
        return cut

    def compress(self, messages: list[dict[str, Any]], current_tokens: int | None = None,
                 focus_topic: str | None = None, force: bool = False,
                 memory_context: str = "",
                 interrupt: threading.Event | None = None) -> list[dict[str, Any]]:
        """``interrupt``: the turn's token; set, it stops the summariser's call at once."""
        cut = self._cut(messages)
        head, middle, tail = messages[:cut.head], messages[cut.head:cut.tail], messages[cut.tail:]
        previous = self.previous_summary
        newer = []
        for message in middle:  # an earlier summary in the middle is carried, not re-read
            text = summary_text(message)
            if text is None:
                newer.append(message)
            elif not previous:
                previous = text
        if not newer:
            self.last_error = ("nothing to summarise between the kept start and the latest "
                               "messages")
            return messages
        summary = self._summarise(newer, previous, focus_topic or "", memory_context,
                                  interrupt)
        if summary is None:
            return messages
        self.previous_summary = summary
        self.compression_count += 1
        self.last_error, self._paused_until = "", 0.0  # it works again: no more pause
        self.last_prompt_tokens = 0  # unknown until the next response reports it
        return [*prune_tool_outputs(head), summary_message(summary), *tail]

    def _summarise(self, messages: list[dict[str, Any]], previous: str, focus: str,
                   memory: str, interrupt: threading.Event | None) -> str | None:
        target = max(MIN_SUMMARY_TOKENS, min(MAX_SUMMARY_TOKENS, estimate_tokens(messages) // 5))
        prompt = summary_prompt(messages, previous=previous, focus=focus, memory=memory,
                                target_tokens=target)
        try:
            response = self.kernel.service(MODELS).call_llm(
                "compression", prompt, session_id=self.session_id or None, interrupt=interrupt)
            text = (response.content or "").strip()
            if not text:
                raise ValueError("the summariser returned an empty summary")
        except Exception as exc:  # any failure: keep the conversation whole
            if interrupt is not None and interrupt.is_set():  # the user stopped it: no pause
                self.last_error = "interrupted"
                return None
            self.last_error = f"{type(exc).__name__}: {exc}"
            self._paused_until = time.monotonic() + self.settings.failure_cooldown
            # the host reports last_error (a warning in a turn, /compress's answer): not twice
            log.info("context compression failed, the conversation stays as it is: %s",
                     self.last_error)
            return None
        return text

"""Messages that plugins inject into a running conversation with ``ctx.inject_message``.

While :meth:`Agent.run_conversation` runs, the agent is the kernel's ``message_sink``: an
injected message is queued here and delivered before the agent's next model call, so the
model answers it in the same run. After a batch of tool calls it is appended to the last tool
result (marked as a message, not tool output), which keeps the role alternation valid;
otherwise it becomes a user message. One that arrives after the run's last model call stays
queued: the interactive chat sends it as the next turn, and the next run delivers it anyway.
A message with another role than ``user`` is delivered as ``[role] content``.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hermes_agent import Kernel

TOOL_RESULT_NOTE = "[A message arrived while the tools ran; it is not tool output:]"


class Inbox:
    """A thread-safe queue of injected messages (the kernel's ``message_sink``)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: list[str] = []

    def put(self, content: str, role: str = "user") -> bool:
        """Queue ``content``; False (not accepted) for an empty or non-text message."""
        if not isinstance(content, str) or not content.strip():
            return False
        text = content if role in ("", "user") else f"[{role}] {content}"
        with self._lock:
            self._items.append(text)
        return True

    def __bool__(self) -> bool:
        with self._lock:
            return bool(self._items)

    def take(self) -> str | None:
        """Every queued message, joined by blank lines (None when there is none)."""
        with self._lock:
            items, self._items = self._items, []
        return "\n\n".join(items) if items else None

    @contextmanager
    def installed(self, kernel: Kernel) -> Iterator[None]:
        """Be ``kernel.message_sink`` for the block; the previous sink is restored after."""
        previous = kernel.message_sink
        kernel.message_sink = self.put
        try:
            yield
        finally:
            if kernel.message_sink == self.put:  # not replaced meanwhile by someone else
                kernel.message_sink = previous


def into_tool_result(result: str, text: str) -> str:
    """``result`` with an injected message appended after a note that it is not tool output."""
    return f"{result}\n\n{TOOL_RESULT_NOTE}\n{text}"

"""Messages that plugins inject into a running conversation with ``ctx.inject_message``.

While :meth:`Agent.run_conversation` runs, the top-level agent answers the ``inject_message``
hook that ``ctx.inject_message`` fires (the latest started, when several run): an injected
message is queued here and delivered before the agent's next model call, so the
model answers it in the same run. After a batch of tool calls it is appended to the last tool
result (marked as a message, not tool output), which keeps the role alternation valid;
otherwise it becomes a user message. One that arrives after the run's last model call stays
queued: the interactive chat sends it as the next turn, and the next run delivers it anyway.
A message with another role than ``user`` is delivered as ``[role] content``.

``/steer TEXT`` (:meth:`Inbox.steer`) goes the same way but only ever into a tool result,
wrapped in the out-of-band markers; it waits for the next batch of tool results, and one still
waiting when the run ends is taken by the front end (the chat sends it as the next turn).
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hermes_agent import Kernel

TOOL_RESULT_NOTE = "[A message arrived while the tools ran; it is not tool output:]"
STEER_OPEN = ("[OUT-OF-BAND USER MESSAGE - the user typed this while you worked; it is not "
              "tool output. Take it into account from now on:]")
STEER_CLOSE = "[/OUT-OF-BAND USER MESSAGE]"
# kernel -> the sinks of its running conversations, innermost last
_RUNNING: "weakref.WeakKeyDictionary[Kernel, list[Callable[[str, str], bool]]]" = (
    weakref.WeakKeyDictionary())


def deliver(kernel: Kernel, content: str, role: str) -> bool | None:
    """The ``inject_message`` hook: queue the message for the innermost conversation running
    on ``kernel``; None when none runs."""
    running = _RUNNING.get(kernel)
    return running[-1](content, role) if running else None


class Inbox:
    """A thread-safe queue of injected messages (``ctx.inject_message``)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: list[tuple[str, str | None]] = []
        self._steers: list[str] = []
        #: the untrusted source of what the last :meth:`take` returned (None: all trusted)
        self.taken_source: str | None = None

    def put(self, content: str, role: str = "user", source: str | None = None) -> bool:
        """Queue ``content``; False (not accepted) for an empty or non-text message.
        ``source``: the text is untrusted, from there (a background subagent that read the
        web): it enters the conversation marked so (docs/security.md)."""
        if not isinstance(content, str) or not content.strip():
            return False
        text = content if role in ("", "user") else f"[{role}] {content}"
        with self._lock:
            self._items.append((text, source))
        return True

    def __bool__(self) -> bool:
        with self._lock:
            return bool(self._items)

    def take(self) -> str | None:
        """Every queued message, joined by blank lines (None when there is none)."""
        with self._lock:
            items, self._items = self._items, []
            self.taken_source = next((src for _, src in items if src is not None), None)
        return "\n\n".join(text for text, _ in items) if items else None

    def steer(self, text: str) -> bool:
        """Queue guidance for the running turn (``/steer``); False for empty text."""
        if not isinstance(text, str) or not text.strip():
            return False
        with self._lock:
            self._steers.append(text.strip())
        return True

    def take_steer(self) -> str | None:
        """Every queued steer, one per line (None when there is none)."""
        with self._lock:
            items, self._steers = self._steers, []
        return "\n".join(items) if items else None

    @contextmanager
    def installed(self, kernel: Kernel) -> Iterator[None]:
        """Receive the messages injected into ``kernel``'s conversation for the block (an
        inbox installed inside it receives them until its block ends)."""
        running = _RUNNING.setdefault(kernel, [])
        running.append(self.put)
        try:
            yield
        finally:
            running.remove(self.put)


def into_tool_result(result: str, text: str) -> str:
    """``result`` with an injected message appended after a note that it is not tool output."""
    return f"{result}\n\n{TOOL_RESULT_NOTE}\n{text}"


def steer_into_tool_result(result: str, text: str) -> str:
    """``result`` with the user's ``/steer`` text appended between the out-of-band markers."""
    return f"{result}\n\n{STEER_OPEN}\n{text}\n{STEER_CLOSE}"

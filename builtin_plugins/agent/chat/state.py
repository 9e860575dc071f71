"""What one interactive chat keeps between its lines: the agent, what ``/retry`` sends again,
the lines queued during a turn, and the display settings its commands change."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hermes_agent import Kernel


@dataclass
class ChatState:
    agent: Any
    kernel: Kernel
    resend: Any = None  # set by /retry: the message to send again (text, or text and images)
    quit: bool = False
    notes: list[str] = field(default_factory=list)
    pending: deque[str] = field(default_factory=deque)  # lines to handle after the turn
    images: list[dict[str, Any]] = field(default_factory=list)  # /image: for the next message
    turn_running: bool = False
    renderer: Any = None  # the chat's TerminalRenderer (/verbose, /reasoning)
    say: Callable[[str], None] | None = None  # prints from another thread (/background)
    personality: str | None = None

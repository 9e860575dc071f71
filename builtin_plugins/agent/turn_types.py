"""The plain data an agent run is described by: its options, a turn's result, session ids
and the event sink type (kept apart from :mod:`.loop` so front ends can import them cheaply)."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hermes_agent.api import Usage

EventSink = Callable[[dict[str, Any]], None]


@dataclass
class AgentOptions:
    """How one agent runs. ``None`` values come from config.yaml."""

    platform: str = "cli"
    provider: str | None = None
    model: str | None = None
    toolsets: list[str] | None = None  # None: config ``toolsets`` (None there: all)
    exclude_tools: frozenset[str] = frozenset()
    only_tools: frozenset[str] | None = None  # restrict to these (subagents)
    max_iterations: int | None = None  # None: config ``agent.max_turns`` (90)
    stream: bool = True
    max_tokens: int | None = None
    ephemeral_system_prompt: str = ""
    personality: str = ""  # sent after the system prompt, never stored (``/personality``)
    reasoning_effort: str | None = None  # low, medium, high where the provider has it
    parent_session_id: str | None = None
    cwd: Path | None = None
    sender_id: str | None = None
    chat_id: str | None = None  # the platform's chat (the gateway's agents), for tools
    approval_callback: Callable[[Any], str] | None = None
    clarify_callback: Callable[..., str] | None = None
    receive_injected: bool = True  # False: ctx.inject_message goes to another agent
    depth: int = 0  # 0 for a top-level agent, 1 for its subagents, ...


@dataclass
class TurnResult:
    """What one :meth:`Agent.run_conversation` call produced."""

    final_response: str
    session_id: str
    task_id: str
    turn_id: str
    completed: bool = False
    interrupted: bool = False
    failed: bool = False
    error: str | None = None
    exit_reason: str = ""
    api_calls: int = 0
    usage: Usage = field(default_factory=Usage)
    cost_usd: float | None = 0.0
    response_transformed: bool = False
    messages: list[dict[str, Any]] = field(default_factory=list)  # added this turn

    def to_dict(self) -> dict[str, Any]:
        return {"final_response": self.final_response, "session_id": self.session_id,
                "task_id": self.task_id, "turn_id": self.turn_id, "completed": self.completed,
                "interrupted": self.interrupted, "failed": self.failed, "error": self.error,
                "exit_reason": self.exit_reason, "api_calls": self.api_calls,
                "usage": self.usage.to_dict(), "cost_usd": self.cost_usd,
                "response_transformed": self.response_transformed}


def new_session_id() -> str:
    return uuid.uuid4().hex[:16]

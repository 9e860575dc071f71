"""The config.yaml keys of shell hooks (as Hermes Agent 0.19 spells them): ``hooks:`` maps a
hook name to a list of ``{matcher, command, timeout}``, and ``hooks_auto_accept`` runs them
without asking for approval. Imports nothing but pydantic."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

DEFAULT_TIMEOUT = 60.0
MAX_TIMEOUT = 600.0


class ShellHookSpec(BaseModel):
    """One command subscribed to a hook."""

    model_config = ConfigDict(extra="allow")

    command: str = Field(min_length=1)  # run with bash -c, the event as JSON on stdin
    matcher: str | None = None  # tool hooks: a regular expression the tool's whole name matches
    timeout: float = Field(DEFAULT_TIMEOUT, gt=0, le=MAX_TIMEOUT)  # seconds, then killed


def _listed(value: Any) -> Any:
    """A hook given one mapping, or a bare command, instead of a list of mappings."""
    if not isinstance(value, dict):
        return value

    def spec(hook: Any) -> Any:
        return {"command": hook} if isinstance(hook, str) else hook

    return {event: [spec(h) for h in hooks] if isinstance(hooks, list) else [spec(hooks)]
            for event, hooks in value.items()}


hooks = (Annotated[dict[str, list[ShellHookSpec]], BeforeValidator(_listed)],
         Field(default_factory=dict))
hooks_auto_accept = (bool, False)  # true: every configured hook runs without approval

"""Prompt layers that plugins fill: memory blocks, the frozen MEMORY and USER snapshots and
the skills index. The agent plugin assembles the system prompt and offers the registry as the
``prompt_layers`` service; until a plugin provides a layer, that layer is simply absent.

A plugin registers a function for a layer, once, in ``register(ctx)``::

    from hermes_agent.api import prompt_layers

    def register(ctx):
        prompt_layers(ctx.kernel).add("memory_snapshot", my_snapshot, plugin=ctx.plugin_name)

``my_snapshot(request: LayerRequest) -> str | None`` is called once when a session's prompt
is built. It must be deterministic for the session: the prompt is frozen and cached. A memory
provider in the ``memory`` slot with ``system_prompt_block() -> str`` contributes to
``memory_blocks`` while it is active, without registering anything.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

__all__ = ["LAYERS", "LayerRequest", "LayerFn", "PromptLayerRegistry", "prompt_layers"]

#: The layers, in prompt order (docs/system-prompt.md says where each sits).
LAYERS: tuple[str, ...] = ("memory_blocks", "memory_snapshot", "user_snapshot", "skills_index")


@dataclass(frozen=True)
class LayerRequest:
    """What a layer function may use to build its text."""

    session_id: str
    platform: str
    tool_names: tuple[str, ...]
    home: Path
    cwd: Path | None = None


LayerFn = Callable[[LayerRequest], "str | None"]


class PromptLayerRegistry(Protocol):
    def add(self, layer: str, fn: LayerFn, *, plugin: str = "") -> None:
        """Contribute ``fn`` to ``layer`` (one of :data:`LAYERS`) for ``plugin``; the
        contribution goes when that plugin is unloaded."""


def prompt_layers(kernel: Any) -> PromptLayerRegistry:
    """The prompt-layer registry of ``kernel`` (the agent plugin's ``prompt_layers`` service)."""
    return kernel.service("prompt_layers")  # type: ignore[no-any-return]

"""Prompt layers that plugins fill: memory blocks, the frozen MEMORY and USER snapshots and
the skills index. Each kernel has one registry (:func:`prompt_layers`), whichever plugin loads
first; the agent plugin reads it when it assembles a system prompt. Until a plugin provides a
layer, that layer is simply absent.

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
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from hermes_agent import ServiceKey

if TYPE_CHECKING:
    from hermes_agent import Kernel

__all__ = ["LAYERS", "LAYER_SEPARATOR", "LayerRequest", "PromptLayers", "prompt_layers",
           "PROMPT_LAYERS"]

#: The layers, in prompt order (docs/system-prompt.md says where each sits).
LAYERS: tuple[str, ...] = ("memory_blocks", "memory_snapshot", "user_snapshot", "skills_index")
#: What the system prompt puts between two layers' texts (and two texts of one layer).
LAYER_SEPARATOR = "\n\n"


@dataclass(frozen=True)
class LayerRequest:
    """What a layer function may use to build its text."""

    session_id: str
    platform: str
    tool_names: tuple[str, ...]
    home: Path
    cwd: Path | None = None
    fence_nonce: str = ""  # the session's delimiter for untrusted text (hermes_agent.kits.fence)


LayerFn = Callable[[LayerRequest], "str | None"]


@dataclass(frozen=True)
class LayerEntry:
    layer: str
    fn: LayerFn
    plugin: str


@dataclass
class PromptLayers:
    """The layer functions registered with one kernel, in registration order."""

    entries: list[LayerEntry] = field(default_factory=list)

    def add(self, layer: str, fn: LayerFn, *, plugin: str = "") -> None:
        """Contribute ``fn`` to ``layer`` (one of :data:`LAYERS`) for ``plugin``; the
        contribution goes when that plugin is unloaded."""
        if layer not in LAYERS:
            raise ValueError(f"unknown prompt layer {layer!r}; layers: {', '.join(LAYERS)}")
        if not callable(fn):
            raise TypeError(f"prompt layer {layer!r} needs a callable (request) -> str | None")
        self.entries.append(LayerEntry(layer, fn, plugin))

    def remove_plugin(self, plugin: str) -> None:  # the kernel calls it on unregistering
        self.entries = [e for e in self.entries if e.plugin != plugin]


#: The key of a kernel's prompt-layer registry (no plugin offers it: the first to ask makes it).
PROMPT_LAYERS = ServiceKey("prompt_layers", PromptLayers)


def prompt_layers(kernel: "Kernel") -> PromptLayers:
    """The prompt-layer registry of ``kernel`` (created on first use)."""
    return kernel.service(PROMPT_LAYERS, PromptLayers)

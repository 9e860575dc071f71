"""The agent's prompt-layer registry, offered to other plugins as the ``prompt_layers``
service (the contract: :mod:`hermes_agent.api.prompt`).

A function whose plugin is not loaded (it failed after registering) is skipped; one that
raises is logged, reported as a notice and skipped.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hermes_agent.api import LAYERS, LayerFn, LayerRequest

log = logging.getLogger("hermes_agent.prompt")



@dataclass
class _Entry:
    layer: str
    fn: LayerFn
    plugin: str


@dataclass
class PromptLayers:
    entries: list[_Entry] = field(default_factory=list)

    def add(self, layer: str, fn: LayerFn, *, plugin: str = "") -> None:
        if layer not in LAYERS:
            raise ValueError(f"unknown prompt layer {layer!r}; layers: {', '.join(LAYERS)}")
        if not callable(fn):
            raise TypeError(f"prompt layer {layer!r} needs a callable (request) -> str | None")
        self.entries.append(_Entry(layer, fn, plugin))

    def remove_plugin(self, plugin: str) -> None:
        self.entries = [e for e in self.entries if e.plugin != plugin]

    def collect(self, kernel: Any, request: LayerRequest) -> tuple[dict[str, list[str]], list[str]]:
        """Texts per layer (registration order) and notices about skipped contributors."""
        texts: dict[str, list[str]] = {layer: [] for layer in LAYERS}
        notices: list[str] = []
        for provider in kernel.slots.active_memory(kernel.config):
            block = getattr(provider, "system_prompt_block", None)
            if callable(block):
                _add(texts["memory_blocks"], notices, f"memory provider {provider.name!r}", block)
        for entry in self.entries:
            status = kernel.plugins.get(entry.plugin) if entry.plugin else None
            if entry.plugin and (status is None or status.state != "loaded"):
                continue
            _add(texts[entry.layer], notices, f"plugin {entry.plugin or '?'} ({entry.layer})",
                 lambda fn=entry.fn: fn(request))
        return texts, notices


def _add(into: list[str], notices: list[str], who: str, call: Callable[[], Any]) -> None:
    try:
        value = call()
    except Exception as exc:
        log.warning("%s: prompt layer raised %s: %s (skipped)", who, type(exc).__name__, exc)
        notices.append(f"{who}: its prompt layer failed ({type(exc).__name__}: {exc}); left out")
        return
    if isinstance(value, str) and value.strip():
        into.append(value.strip())

"""Reading the prompt layers other plugins registered (:mod:`hermes_agent.api.prompt`)
while a system prompt is assembled.

A function whose plugin is not loaded (it failed after registering) is skipped; one that
raises is logged, reported as a notice and skipped.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from hermes_agent.api import LAYERS, LayerRequest, prompt_layers

from .memory_slot import active_memory

if TYPE_CHECKING:
    from hermes_agent import Kernel

log = logging.getLogger("hermes_agent.prompt")


def collect(kernel: Kernel, request: LayerRequest) -> tuple[dict[str, list[str]], list[str]]:
    """Texts per layer (registration order) and notices about skipped contributors."""
    texts: dict[str, list[str]] = {layer: [] for layer in LAYERS}
    notices: list[str] = []
    for provider in active_memory(kernel):
        block = getattr(provider, "system_prompt_block", None)
        if callable(block):
            _add(texts["memory_blocks"], notices, f"memory provider {provider.name!r}", block)
    for entry in prompt_layers(kernel).entries:
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

"""The memory providers hermes knows (``hermes memory status`` and ``setup`` list them)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hermes_agent import Kernel


def memory_providers(kernel: Kernel) -> dict[str, Any]:
    """Every memory provider hermes knows, by the name ``memory.provider`` takes: the plugins
    of the memory slot (loaded or not) and the providers registered by other plugins."""
    found: dict[str, Any] = {}
    for status in kernel.plugins.values():
        registered = [p.split(":", 1)[1] for p in status.providers if p.startswith("memory:")]
        if status.record.slot == "memory" or registered:
            found[status.name] = status
        for name in registered:
            found.setdefault(name, status)
    found.pop("builtin", None)
    return found

"""Which memory providers a conversation uses: the agent's policy over the kernel's memory
slot. The builtin provider (hermes' own MEMORY.md and USER.md, when its plugin is loaded) is
always on; ``memory.provider`` adds one external provider (none: builtin only)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hermes_agent import Kernel

BUILTIN = "builtin"  # the provider name of the builtin memory plugin


def active_memory(kernel: Kernel) -> list[Any]:
    """The builtin memory provider (when installed) plus the external one config.yaml
    selects; a selection that is not installed raises the kernel's ``SlotError``."""
    slots = kernel.slots
    installed = slots.providers.get("memory", {})
    active = [installed[BUILTIN].obj] if BUILTIN in installed else []
    external = slots.selection("memory", kernel.config)
    if external and external != BUILTIN:
        active.append(slots.get("memory", external))
    return active

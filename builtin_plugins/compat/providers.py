"""Finding the memory provider of a plugin written for Hermes Agent 0.19 that registers none:
an entry point naming a provider class or instance, or the first provider class its module
defines (as that version loads them). The kernel asks through the ``find_slot_provider`` hook.
"""

from __future__ import annotations

import inspect
from typing import Any


def find_slot_provider(slot: str, target: Any) -> Any:
    """The ``find_slot_provider`` hook: a memory provider the original would have loaded from
    ``target``; None for other slots (the original found none there either)."""
    return find_memory_provider(target) if slot == "memory" else None


def find_memory_provider(target: Any) -> Any:
    """The provider ``target`` (a module, class or instance) holds, or None."""
    if inspect.ismodule(target):
        target = next((c for c in vars(target).values() if _is_provider_class(c, target)), None)
    obj = target() if inspect.isclass(target) else target
    return obj if isinstance(getattr(obj, "name", None), str) else None


def _is_provider_class(obj: Any, module: Any) -> bool:
    """A concrete class of ``module`` (or its submodules) that subclasses a ``MemoryProvider``
    base or has the required methods (duck-typed providers subclass nothing)."""
    if not inspect.isclass(obj) or inspect.isabstract(obj):
        return False
    home = obj.__module__ or ""
    if home != module.__name__ and not home.startswith(module.__name__ + "."):
        return False
    based = any(base.__name__ == "MemoryProvider" for base in obj.__mro__[1:])
    return based or all(callable(getattr(obj, m, None))
                        for m in ("is_available", "initialize", "get_tool_schemas"))

"""Provider slots: exclusive or many-valued capabilities chosen by name in config.yaml.

A slot never picks a provider by registration order and never falls back silently: a
selected name that is not installed is a :class:`SlotError` listing what is installed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from .errors import SlotError

if TYPE_CHECKING:
    from .records import Provider

SLOTS = ("memory", "context_engine", "model_provider", "web_search", "platform", "session_store")
BUILTIN_MEMORY = "builtin"


class SlotInfo(NamedTuple):  # a tuple, not a dataclass: config.yaml's defaults read it at start-up
    name: str
    config_key: str  # where config.yaml selects the active provider ("" = none)
    cardinality: str  # "one" | "many" | "builtin+one"
    default: str = ""  # always a provider some builtin plugin registers, or "" (none)
    label: str = ""
    enables: bool = False  # naming a plugin in config_key enables it, whatever its kind


# The one place the slots' config keys and defaults are written.
SLOT_INFO = {
    "memory": SlotInfo("memory", "memory.provider", "builtin+one", "", "memory provider", True),
    "context_engine": SlotInfo("context_engine", "context.engine", "one", "compressor",
                               "context engine", True),
    "model_provider": SlotInfo("model_provider", "model.provider", "many", "", "model provider"),
    "web_search": SlotInfo("web_search", "web.backend", "many", "", "web search provider"),
    "platform": SlotInfo("platform", "", "many", "", "platform"),
    "session_store": SlotInfo("session_store", "sessions.store", "one", "sqlite", "session store"),
}
assert set(SLOT_INFO) == set(SLOTS)
#: slot -> config key, for the slots whose selection enables the plugin it names
ENABLING_KEYS = {slot: info.config_key for slot, info in SLOT_INFO.items() if info.enables}


def slot_defaults() -> dict[str, dict[str, str]]:
    """config.yaml's defaults of the slot selections: ``{"memory": {"provider": ""}, ...}``."""
    tree: dict[str, dict[str, str]] = {}
    for info in SLOT_INFO.values():
        if info.config_key:
            section, _, key = info.config_key.partition(".")
            tree.setdefault(section, {})[key] = info.default
    return tree


class Slots:
    """The providers of every slot, by name."""

    def __init__(self) -> None:
        self.providers: dict[str, dict[str, Provider]] = {slot: {} for slot in SLOTS}

    def add(self, provider: "Provider") -> None:
        self.providers[provider.slot][provider.name] = provider

    def remove_plugin(self, plugin: str) -> None:
        for slot, entries in self.providers.items():
            self.providers[slot] = {n: p for n, p in entries.items() if p.plugin != plugin}

    def owner(self, slot: str, name: str) -> str | None:
        provider = self.providers[slot].get(name)
        return provider.plugin if provider else None

    def installed(self, slot: str) -> list[str]:
        return sorted(self.providers[slot])

    def get(self, slot: str, name: str) -> Any:
        """The provider called ``name`` in ``slot``, or the one the plugin called ``name``
        registered there; :class:`SlotError` if it is not installed."""
        entry = self.providers[slot].get(name)
        if entry is None:
            owned = [p for p in self.providers[slot].values() if p.plugin == name]
            entry = owned[0] if len(owned) == 1 else None
        if entry is not None:
            return entry.obj
        info = SLOT_INFO[slot]
        installed = ", ".join(self.installed(slot)) or "none"
        where = f" (selected by {info.config_key} in config.yaml)" if info.config_key else ""
        fix = (f"Set {info.config_key} to one of those, or install" if info.config_key
               else "Install")
        raise SlotError(f"{info.label} {name!r}{where} is not installed; installed: {installed}. "
                        f"{fix} and enable the plugin that provides {name!r}.")

    def selection(self, slot: str, config: Any) -> str:
        info = SLOT_INFO[slot]
        return (config.get(info.config_key, "") if info.config_key else "") or info.default

    def active(self, slot: str, config: Any) -> Any:
        """The selected provider of a slot (None when nothing is selected)."""
        info = SLOT_INFO[slot]
        if info.cardinality == "builtin+one":
            raise SlotError(f"the {info.label} slot may hold two providers; use active_memory()")
        name = self.selection(slot, config)
        return self.get(slot, name) if name else None

    def active_memory(self, config: Any) -> list[Any]:
        """The builtin memory provider (when installed) plus the external one selected by
        ``memory.provider`` (none: builtin only)."""
        memory = self.providers["memory"]
        external = self.selection("memory", config)
        active = [memory[BUILTIN_MEMORY].obj] if BUILTIN_MEMORY in memory else []
        if external and external != BUILTIN_MEMORY:
            active.append(self.get("memory", external))
        return active

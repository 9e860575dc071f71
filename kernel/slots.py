"""Provider slots: exclusive or many-valued capabilities chosen by name in config.yaml.

The slots are declared by the builtin plugins that own them (``slots:`` in plugin.yaml: the
config key selecting the provider, the cardinality, the default); the kernel keeps each
slot's providers by name. A slot never picks a provider by registration order and never
falls back silently: a selected name that is not installed is a :class:`SlotError` listing
what is installed. How several providers of a slot work together is their users' policy.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from .errors import SlotError
from .manifest import SlotDeclaration

if TYPE_CHECKING:
    from .records import Provider


def declared_slots(manifests: Iterable[Any]) -> dict[str, SlotDeclaration]:
    """The slots the given manifests declare (the first declaration of a name wins)."""
    table: dict[str, SlotDeclaration] = {}
    for manifest in manifests:
        for name, declaration in manifest.slots.items():
            table.setdefault(name, declaration)
    return table


def slot_defaults(slots: Mapping[str, SlotDeclaration]) -> dict[str, dict[str, str]]:
    """config.yaml's defaults of the slot selections: ``{"memory": {"provider": ""}, ...}``."""
    tree: dict[str, dict[str, str]] = {}
    for declaration in slots.values():
        if declaration.config_key:
            section, _, key = declaration.config_key.partition(".")
            tree.setdefault(section, {})[key] = declaration.default
    return tree


def enabling_keys(slots: Mapping[str, SlotDeclaration]) -> dict[str, str]:
    """slot -> config key, for the slots whose selection enables the plugin it names."""
    return {name: d.config_key for name, d in slots.items() if d.enables and d.config_key}


class Slots:
    """The providers of every slot, by name; ``info``: the declared slots."""

    def __init__(self, info: Mapping[str, SlotDeclaration] | None = None) -> None:
        self.info: dict[str, SlotDeclaration] = dict(info or {})
        self.providers: dict[str, dict[str, Provider]] = {slot: {} for slot in self.info}

    def label(self, slot: str) -> str:
        declared = self.info.get(slot)
        return declared.label if declared and declared.label else slot.replace("_", " ")

    def check(self, slot: str) -> None:
        """Raise ``ValueError`` unless ``slot`` is declared."""
        if slot not in self.info:
            raise ValueError(f"unknown provider slot {slot!r}; slots: "
                             f"{', '.join(self.info) or '(none declared)'}")

    def add(self, provider: "Provider") -> None:
        self.providers.setdefault(provider.slot, {})[provider.name] = provider

    def remove_plugin(self, plugin: str) -> None:
        for slot, entries in self.providers.items():
            self.providers[slot] = {n: p for n, p in entries.items() if p.plugin != plugin}

    def owner(self, slot: str, name: str) -> str | None:
        provider = self.providers.get(slot, {}).get(name)
        return provider.plugin if provider else None

    def installed(self, slot: str) -> list[str]:
        return sorted(self.providers.get(slot, {}))

    def get(self, slot: str, name: str) -> Any:
        """The provider called ``name`` in ``slot``, or the one the plugin called ``name``
        registered there; :class:`SlotError` if it is not installed."""
        entries = self.providers.get(slot, {})
        entry = entries.get(name)
        if entry is None:
            owned = [p for p in entries.values() if p.plugin == name]
            entry = owned[0] if len(owned) == 1 else None
        if entry is not None:
            return entry.obj
        key = self.info[slot].config_key if slot in self.info else ""
        installed = ", ".join(self.installed(slot)) or "none"
        where = f" (selected by {key} in config.yaml)" if key else ""
        fix = f"Set {key} to one of those, or install" if key else "Install"
        raise SlotError(f"{self.label(slot)} {name!r}{where} is not installed; installed: "
                        f"{installed}. {fix} and enable the plugin that provides {name!r}.")

    def selection(self, slot: str, config: Any) -> str:
        """The provider name config.yaml selects for ``slot``, else the declared default."""
        declared = self.info.get(slot) or SlotDeclaration()
        chosen = config.get(declared.config_key, "") if declared.config_key else ""
        return chosen or declared.default

    def active(self, slot: str, config: Any) -> Any:
        """The selected provider of a slot (None when nothing is selected)."""
        name = self.selection(slot, config)
        return self.get(slot, name) if name else None

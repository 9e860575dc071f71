"""What plugins declare in plugin.yaml for the kernel to act on without importing them.

``essential: true`` keeps a builtin plugin from being disabled. ``cli_commands`` names the
``hermes`` commands a plugin adds (``hermes --help`` lists them from plugin.yaml alone; a
command's module is imported when it runs). ``config_sections`` names the config.yaml keys
a builtin plugin owns and the pydantic model validating each. Targets are
``"module:attr"``; a leading dot makes the module relative to the plugin's own package.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .discovery import PluginRecord


@dataclass(frozen=True)
class DeclaredCommand:
    name: str
    entry: str
    help: str
    record: PluginRecord


def is_essential(record: PluginRecord) -> bool:
    """Whether ``record`` is a builtin plugin that cannot be disabled."""
    return record.source == "builtin" and bool(record.manifest and record.manifest.essential)


def declared_commands(records: Iterable[PluginRecord]) -> dict[str, DeclaredCommand]:
    """``hermes`` commands declared by ``records`` (usable ones: no manifest error). A name
    is kept by a builtin plugin first, then by the first plugin in discovery order; a plugin
    declaring a name already taken gets a warning on its record."""
    usable = [r for r in records if r.manifest is not None and not r.error]
    table: dict[str, DeclaredCommand] = {}
    for record in sorted(usable, key=lambda r: r.source != "builtin"):  # stable: order kept
        for name, spec in record.manifest.cli_commands.items():  # type: ignore[union-attr]
            owner = table.get(name)
            if owner is None:
                table[name] = DeclaredCommand(name, spec.entry, spec.help, record)
                continue
            warning = (f"CLI command 'hermes {name}' is declared by plugin "
                       f"'{owner.record.name}' too, which keeps it; rename it in plugin.yaml")
            if warning not in record.warnings:
                record.warnings.append(warning)
    return table


def config_sections(records: Iterable[PluginRecord]) -> dict[str, str]:
    """config.yaml keys owned by builtin plugins: key -> absolute ``"module:attr"``."""
    sections: dict[str, str] = {}
    for record in records:
        if record.source == "builtin" and record.manifest is not None and not record.error:
            for key, target in record.manifest.config_sections.items():
                sections.setdefault(key, absolute(record, target))
    return dict(sorted(sections.items()))


def import_base(record: PluginRecord) -> str:
    """The package a relative target of ``record`` is resolved against."""
    if record.source == "builtin":
        return record.module
    if record.entry_point is not None:
        return record.entry_point.value.partition(":")[0].strip()
    from .loader import module_name

    return module_name(record)


def absolute(record: PluginRecord, target: str) -> str:
    module, _, attr = target.partition(":")
    if module.startswith("."):
        base = import_base(record)
        module = base if module == "." else base + module
    return f"{module}:{attr}"


def resolve(record: PluginRecord, target: str) -> Any:
    """Import ``target`` of ``record`` and return the attribute. A folder plugin's package
    exists only once the kernel has loaded the plugin."""
    module, _, attr = absolute(record, target).partition(":")
    return getattr(importlib.import_module(module), attr)

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
from typing import Any

from .discovery import PluginRecord


def is_essential(record: PluginRecord) -> bool:
    """Whether ``record`` is a builtin plugin that cannot be disabled."""
    return record.source == "builtin" and bool(record.manifest and record.manifest.essential)


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
    """``target`` with a relative module resolved against the plugin's package."""
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

"""Importing a discovered plugin's code, and the ``"module:attr"`` targets its plugin.yaml
names (``cli_commands``, ``config_sections``); a leading dot makes a target's module
relative to the plugin's own package.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .discovery import PluginRecord

NAMESPACE = "hermes_plugins"  # the original's module namespace; shims in the wild key off it


def module_name(record: PluginRecord) -> str:
    slug = record.name.replace("-", "_").replace(".", "_")
    category = record.category.replace("-", "_")
    return f"{NAMESPACE}.{category}__{slug}" if category else f"{NAMESPACE}.{slug}"


def import_plugin(record: PluginRecord) -> Any:
    """Import the plugin and return its target: a module, a callable or an object."""
    if record.source == "builtin":
        return importlib.import_module(record.module)
    if record.entry_point is not None:
        from importlib.metadata import entry_points

        ref = record.entry_point
        matches = list(entry_points(group=ref.group, name=ref.name))
        if not matches:
            raise ImportError(f"entry point {ref.name!r} in group {ref.group!r} is no longer installed")
        return matches[0].load()
    assert record.path is not None
    init = record.path / "__init__.py"
    if not init.is_file():
        raise ImportError(f"no __init__.py in {record.path}: a directory plugin is a Python "
                          "package; add __init__.py with a register(ctx) function")
    name = module_name(record)
    existing = sys.modules.get(name)
    if existing is not None and Path(getattr(existing, "__file__", "") or "") == init:
        return existing
    unimport(name)
    if NAMESPACE not in sys.modules:
        namespace = types.ModuleType(NAMESPACE)
        namespace.__path__ = []  # type: ignore[attr-defined]
        sys.modules[NAMESPACE] = namespace
    spec = importlib.util.spec_from_file_location(name, init,
                                                  submodule_search_locations=[str(record.path)])
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {init}")
    module = sys.modules[name] = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except BaseException:
        unimport(name)
        raise
    if record.kind == "exclusive" and record.source == "user":
        sys.modules.setdefault(f"_hermes_user_memory.{record.name}", module)  # legacy alias
    return module


def unimport(name: str) -> None:
    """Forget a plugin module and its submodules, so a failed load leaves nothing behind."""
    for key in [k for k in sys.modules if k == name or k.startswith(name + ".")]:
        del sys.modules[key]


def absolute(record: PluginRecord, target: str) -> str:
    """``target`` with a relative module resolved against the plugin's package."""
    module, _, attr = target.partition(":")
    if module.startswith("."):
        if record.source == "builtin":
            base = record.module
        elif record.entry_point is not None:
            base = record.entry_point.value.partition(":")[0].strip()
        else:
            base = module_name(record)
        module = base if module == "." else base + module
    return f"{module}:{attr}"


def resolve(record: PluginRecord, target: str) -> Any:
    """Import ``target`` of ``record`` and return the attribute (a folder plugin's package
    exists only once the kernel has loaded the plugin)."""
    module, _, attr = absolute(record, target).partition(":")
    return getattr(importlib.import_module(module), attr)


def config_sections(records: Iterable[PluginRecord]) -> dict[str, str]:
    """config.yaml keys owned by builtin plugins: key -> absolute ``"module:attr"``."""
    sections: dict[str, str] = {}
    for record in records:
        if record.source == "builtin" and record.manifest is not None and not record.error:
            for key, target in record.manifest.config_sections.items():
                sections.setdefault(key, absolute(record, target))
    return dict(sorted(sections.items()))

"""Importing a discovered plugin's code. Only the kernel's load step calls this."""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types
from pathlib import Path
from typing import Any

from .discovery import PluginRecord

NAMESPACE = "hermes_plugins"  # the original's module namespace; shims in the wild key off it


def module_name(record: PluginRecord) -> str:
    slug = record.name.replace("-", "_").replace(".", "_")
    return f"{NAMESPACE}.{record.category.replace('-', '_')}__{slug}" if record.category else f"{NAMESPACE}.{slug}"


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
    return _import_directory(record)


def _import_directory(record: PluginRecord) -> types.ModuleType:
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
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
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

"""An import hook that serves the module paths of Hermes Agent 0.19 (``agent.memory_provider``,
``tools.registry``, ...) to plugins written for it, without installing generic top-level
packages: the hook sits at the end of ``sys.meta_path``, so a real package of the same name
always wins.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import types
from typing import Any

_HERE = __name__.rsplit(".", 1)[0]
# legacy module -> {attribute: "module:attribute"}; the module is one of this plugin's, or the
# contracts package ("hermes_agent.api"); None marks a package.
LEGACY_MODULES: dict[str, dict[str, str] | None] = {
    "agent": None,
    "agent.memory_provider": {"MemoryProvider": "hermes_agent.api:MemoryProvider"},
    "agent.context_engine": {"ContextEngine": "hermes_agent.api:ContextEngine"},
    "agent.web_search_provider": {"WebSearchProvider": "web_provider:WebSearchProvider",
                                  "get_provider_env": "helpers:get_provider_env"},
    "agent.browser_provider": {"BrowserProvider": "hermes_agent.api.browser:BrowserProvider"},
    "tools": None,
    "tools.registry": {"tool_error": "helpers:tool_error", "tool_result": "helpers:tool_result"},
    "tools.interrupt": {"is_interrupted": "helpers:is_interrupted"},
    "tools.website_policy": {"check_website_access": "helpers:check_website_access"},
    "hermes_constants": {"get_hermes_home": "helpers:get_hermes_home"},
    # platform plugins: the gateway types, mapped onto the platform SDK (gateway_types.py)
    "gateway": None,
    "gateway.config": {"Platform": "gateway_types:Platform",
                       "PlatformConfig": "hermes_agent.api:PlatformConfig"},
    "gateway.session": {"SessionSource": "gateway_types:SessionSource"},
    "gateway.platforms": None,
    "gateway.platforms.base": {
        "BasePlatformAdapter": "gateway_types:BasePlatformAdapter",
        "MessageEvent": "gateway_types:MessageEvent",
        "MessageType": "gateway_types:MessageType",
        "ProcessingOutcome": "gateway_types:ProcessingOutcome",
        "SendResult": "gateway_types:SendResult",
    },
}


class LegacyModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname not in LEGACY_MODULES:
            return None
        is_package = LEGACY_MODULES[fullname] is None
        return importlib.machinery.ModuleSpec(fullname, self, is_package=is_package)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        module = types.ModuleType(spec.name, f"compatibility module served by hermes ({_HERE})")
        if LEGACY_MODULES[spec.name] is None:
            module.__path__ = []  # a package whose submodules come from this hook only
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        for attr, target in (LEGACY_MODULES[module.__name__] or {}).items():
            source, _, name = target.partition(":")
            where = source if source.startswith("hermes_agent.") else f"{_HERE}.{source}"
            setattr(module, attr, getattr(importlib.import_module(where), name))


def install() -> bool:
    """Add the hook once (idempotent). Returns True if it was added now."""
    if any(isinstance(finder, LegacyModules) for finder in sys.meta_path):
        return False
    sys.meta_path.append(LegacyModules())
    return True


def uninstall() -> None:
    """Remove the hook and forget the modules it served."""
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, LegacyModules)]
    for name in LEGACY_MODULES:
        module = sys.modules.get(name)
        if module is not None and isinstance(getattr(module, "__spec__", None) and
                                             module.__spec__.loader, LegacyModules):
            del sys.modules[name]

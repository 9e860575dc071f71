"""The environment of the commands the agent runs on the model's behalf.

Plugins written for Hermes Agent 0.19 read their keys from ``os.environ``, so the kernel
exports ``$HERMES_HOME/.env`` into this process. Commands the model chooses (the terminal
tool; later MCP servers and cron jobs) must not inherit those secrets: ``printenv`` would
hand them to the model. :func:`command_env` is this process's environment without

- every variable whose value came from ``$HERMES_HOME/.env``;
- the key variables of the model providers (``key_env`` of every registered provider, the
  ``key_env``/``api_key_env`` of ``fallback_providers`` entries), wherever they were set;
- the variables plugins declare as secret in plugin.yaml (``requires_env``/``optional_env``
  entries with ``secret: true``);

except the names the caller opts in (``passthrough``: the terminal tool passes its
``terminal.env_passthrough`` setting; the kernel knows no plugin's settings).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .kernel import Kernel

def _names(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        return (value,) if value else ()
    if isinstance(value, (list, tuple, set, frozenset)):
        return (v for v in value if isinstance(v, str) and v)
    return ()


def secret_env_names(kernel: "Kernel") -> frozenset[str]:
    """The variables commands the agent runs must not see (before any opt-in)."""
    names: set[str] = set(kernel.dotenv_names)
    for entries in kernel.slots.providers.values():
        for entry in entries.values():
            names.update(_names(getattr(entry.obj, "key_env", ())))
    for entry in kernel.config.get("fallback_providers") or ():
        if isinstance(entry, Mapping):
            names.update(_names(entry.get("key_env")))
            names.update(_names(entry.get("api_key_env")))
    for status in kernel.plugins.values():
        manifest = status.record.manifest
        if manifest is not None:
            names.update(req.name for req in (*manifest.requires_env, *manifest.optional_env)
                         if req.secret)
    return frozenset(names)


def command_env(kernel: "Kernel", extra: Mapping[str, str] | None = None,
                passthrough: Iterable[str] | str = ()) -> dict[str, str]:
    """The environment for a command the agent runs: this process's environment without the
    secrets (see the module docstring), opted-in names added from the kernel's environment
    (which includes .env) when this process lacks them, then ``extra``."""
    allowed = frozenset(_names(passthrough))
    hidden = secret_env_names(kernel) - allowed
    env = {name: value for name, value in os.environ.items() if name not in hidden}
    for name in allowed:
        if name not in env and name in kernel.env:
            env[name] = kernel.env[name]
    env.update(extra or {})
    return env

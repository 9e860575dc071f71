"""Helper functions that plugins written for Hermes Agent 0.19 import by their old module paths.

``tool_result`` and ``tool_error`` are the contracts' (``hermes_agent.api``), re-exported here.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

from hermes_agent import hermes_home, read_env_file
from hermes_agent.api import tool_error, tool_result

__all__ = ["check_website_access", "get_hermes_home", "get_provider_env", "is_interrupted",
           "set_interrupted", "tool_error", "tool_result"]

_interrupted: set[int] = set()
_lock = threading.Lock()


def set_interrupted(thread_id: int, interrupted: bool = True) -> None:
    """Mark (or clear) an interrupt for the thread running a tool; the agent calls this."""
    with _lock:
        (_interrupted.add if interrupted else _interrupted.discard)(thread_id)


def is_interrupted() -> bool:
    """Whether the user interrupted the tool running on the current thread."""
    with _lock:
        return threading.get_ident() in _interrupted


def check_website_access(url: str, config_path: Path | None = None) -> dict[str, str] | None:
    """``None`` when ``url`` may be fetched. This version has no website blocklist, so every
    URL is allowed; the function exists so plugins that consult it keep working."""
    return None


def get_hermes_home() -> Path:
    return hermes_home()


def get_provider_env(name: str) -> str:
    """A provider's setting from the environment, else from ``$HERMES_HOME/.env``."""
    if os.environ.get(name):
        return os.environ[name]
    return read_env_file(get_hermes_home() / ".env").get(name, "")

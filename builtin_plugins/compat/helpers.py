"""Helper functions that plugins written for Hermes Agent 0.19 import by their old module paths.

``tool_result``, ``tool_error`` and the interrupt flag (``set_interrupted`` /
``is_interrupted``) are ``hermes_agent.api``'s, re-exported here.
"""

from __future__ import annotations

import os
from pathlib import Path

from hermes_agent import hermes_home, read_env_file
from hermes_agent.api import tool_error, tool_result
from hermes_agent.kits.interrupt import is_interrupted, set_interrupted

__all__ = ["check_website_access", "get_hermes_home", "get_provider_env", "is_interrupted",
           "set_interrupted", "tool_error", "tool_result"]

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

"""The api-server platform: an OpenAI-compatible HTTP API served by the gateway
(``hermes gateway run``). Settings: ``platforms.api_server`` in config.yaml and
``API_SERVER_ENABLED``, ``API_SERVER_KEY``, ``API_SERVER_HOST``, ``API_SERVER_PORT``; see
docs/gateway.md."""

from __future__ import annotations

import importlib.util
from typing import Any

from .settings import Settings, SettingsError, load

__all__ = ["Settings", "SettingsError", "register"]
INSTALL_HINT = "pip install 'hermes-agent-runtime[platform-api-server]'"


def available() -> bool:
    return all(importlib.util.find_spec(m) is not None for m in ("starlette", "uvicorn"))


def register(ctx: Any) -> None:
    env = ctx.kernel.env

    def factory(config: Any) -> Any:
        from .adapter import ApiServerAdapter

        return ApiServerAdapter(config, load(config, env))  # SettingsError says what to set

    ctx.register_platform("api_server", "OpenAI-compatible API server", adapter_factory=factory,
                          check_fn=available, install_hint=INSTALL_HINT,
                          allowed_users_env="API_SERVER_ALLOWED_USERS", authenticates=True)

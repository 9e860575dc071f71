"""The webhook platform: a generic signed webhook for the gateway (``hermes gateway run``).
Messages arrive as signed JSON POSTs; replies are POSTed, signed the same way, to
``platforms.webhook.reply_url``. Settings: ``platforms.webhook`` in config.yaml and
``WEBHOOK_ENABLED``, ``WEBHOOK_SECRET``, ``WEBHOOK_HOST``, ``WEBHOOK_PORT``, ``WEBHOOK_PATH``,
``WEBHOOK_REPLY_URL``; see docs/gateway.md."""

from __future__ import annotations

import importlib.util
from typing import Any

from .settings import Settings, SettingsError, load
from .signing import sign

__all__ = ["Settings", "SettingsError", "register", "sign"]
INSTALL_HINT = "pip install 'hermes-agent-runtime[platform-webhook]'"


def available() -> bool:
    return all(importlib.util.find_spec(m) is not None for m in ("starlette", "uvicorn"))


def register(ctx: Any) -> None:
    env = ctx.kernel.env

    def factory(config: Any) -> Any:
        from .adapter import WebhookAdapter

        return WebhookAdapter(config, load(config, env))  # SettingsError says what to set

    ctx.register_platform("webhook", "Generic webhook", adapter_factory=factory,
                          check_fn=available, install_hint=INSTALL_HINT,
                          allowed_users_env="WEBHOOK_ALLOWED_USERS", authenticates=True)

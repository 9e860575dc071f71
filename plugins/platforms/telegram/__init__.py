"""The Telegram platform: a Bot API bot answering chats through the gateway, by long polling
or by webhook. Settings: ``platforms.telegram`` in config.yaml and ``TELEGRAM_BOT_TOKEN``,
``TELEGRAM_WEBHOOK_SECRET``, ``TELEGRAM_ALLOWED_USERS``; see docs/gateway.md."""

from __future__ import annotations

import importlib.util
from typing import Any

from .settings import Settings, SettingsError, load

__all__ = ["Settings", "SettingsError", "register"]
INSTALL_HINT = "pip install 'hermes-agent-runtime[platform-telegram]'"


def available() -> bool:
    return importlib.util.find_spec("httpx2") is not None


def register(ctx: Any) -> None:
    env = ctx.kernel.env

    def factory(config: Any) -> Any:
        settings = load(config, env)  # SettingsError says what to set
        if settings.mode == "webhook" and not all(
                importlib.util.find_spec(m) for m in ("starlette", "uvicorn")):
            raise SettingsError(f"webhook mode needs starlette and uvicorn: {INSTALL_HINT}")
        from hermes_agent.kits.media import Transcriber

        from .adapter import TelegramAdapter

        return TelegramAdapter(config, settings, Transcriber(ctx.kernel))

    ctx.register_platform("telegram", "Telegram", adapter_factory=factory, check_fn=available,
                          install_hint=INSTALL_HINT, allowed_users_env="TELEGRAM_ALLOWED_USERS",
                          max_message_length=4096)

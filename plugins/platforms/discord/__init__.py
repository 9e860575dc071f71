"""The Discord platform: a bot on Discord's gateway websocket (receiving) and REST API
(sending), run by the gateway (``hermes gateway run``). Settings: ``platforms.discord`` in
config.yaml, ``DISCORD_BOT_TOKEN`` (environment or .env only), ``DISCORD_ALLOWED_USERS``; see
docs/gateway.md."""

from __future__ import annotations

import importlib.util
from typing import Any

from .settings import Settings, SettingsError, load

__all__ = ["Settings", "SettingsError", "register"]
INSTALL_HINT = "pip install 'hermes-agent-runtime[platform-discord]'"
PROMPT_HINT = ("You are chatting on Discord. Keep messages short (a reply over 2000 characters "
               "is split into several); Discord markdown works, tables do not.")


def available() -> bool:
    return importlib.util.find_spec("websockets") is not None


def register(ctx: Any) -> None:
    env = ctx.kernel.env

    def factory(config: Any) -> Any:
        from hermes_agent.kits.media import Transcriber

        from .adapter import DiscordAdapter

        # SettingsError says what to set
        return DiscordAdapter(config, load(config, env), Transcriber(ctx.kernel))

    ctx.register_platform("discord", "Discord", adapter_factory=factory, check_fn=available,
                          install_hint=INSTALL_HINT, allowed_users_env="DISCORD_ALLOWED_USERS",
                          max_message_length=2000, prompt_hint=PROMPT_HINT)

"""The Mattermost platform: a bot account on a Mattermost server, receiving on its websocket
and answering through its REST API (v4). Settings: ``platforms.mattermost`` in config.yaml,
``MATTERMOST_URL``, ``MATTERMOST_TOKEN`` (environment or .env only),
``MATTERMOST_ALLOWED_USERS``; see docs/gateway.md."""

from __future__ import annotations

import importlib.util
from typing import Any

from .settings import Settings, SettingsError, load

__all__ = ["Settings", "SettingsError", "register"]
INSTALL_HINT = "pip install 'hermes-agent-runtime[platform-mattermost]'"
PROMPT_HINT = "You are chatting on Mattermost, which renders markdown (tables included)."


def available() -> bool:
    return importlib.util.find_spec("websockets") is not None


def register(ctx: Any) -> None:
    kernel = ctx.kernel

    def factory(config: Any) -> Any:
        settings = load(config, kernel.env)  # SettingsError says what to set
        from .adapter import MattermostAdapter

        return MattermostAdapter(config, settings,
                                 kernel.home / "gateway" / "mattermost-posts.json")

    ctx.register_platform("mattermost", "Mattermost", adapter_factory=factory,
                          check_fn=available, install_hint=INSTALL_HINT,
                          allowed_users_env="MATTERMOST_ALLOWED_USERS",
                          allow_all_env="MATTERMOST_ALLOW_ALL_USERS", max_message_length=16383,
                          prompt_hint=PROMPT_HINT)

"""The WhatsApp platform, through Meta's WhatsApp Business Cloud API (platform name
``whatsapp_cloud``, as in the original): messages arrive on a signed webhook, replies go out
through the Graph API. Settings: ``platforms.whatsapp_cloud`` in config.yaml and the
``WHATSAPP_CLOUD_*`` variables; see docs/gateway.md."""

from __future__ import annotations

import importlib.util
from typing import Any

from .settings import Settings, SettingsError, load

__all__ = ["Settings", "SettingsError", "register"]
INSTALL_HINT = "pip install 'hermes-agent-runtime[platform-whatsapp]'"
PROMPT_HINT = ("You are chatting on WhatsApp. Keep replies short; WhatsApp shows *bold*, "
               "_italic_, ~strikethrough~ and ```code```, not headings or tables.")


def available() -> bool:
    return all(importlib.util.find_spec(m) for m in ("starlette", "uvicorn"))


def register(ctx: Any) -> None:
    env = ctx.kernel.env

    def factory(config: Any) -> Any:
        settings = load(config, env)  # SettingsError says what to set
        from .adapter import WhatsAppCloudAdapter

        return WhatsAppCloudAdapter(config, settings,
                                    ctx.kernel.home / "gateway" / "media" / "whatsapp")

    ctx.register_platform("whatsapp_cloud", "WhatsApp (Cloud API)", adapter_factory=factory,
                          check_fn=available, install_hint=INSTALL_HINT,
                          allowed_users_env="WHATSAPP_CLOUD_ALLOWED_USERS",
                          allow_all_env="WHATSAPP_CLOUD_ALLOW_ALL_USERS",
                          max_message_length=4096, prompt_hint=PROMPT_HINT)

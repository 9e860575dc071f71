"""The Slack platform: a Slack app's bot answering through the gateway (``hermes gateway
run``), receiving over Socket Mode (no public URL) or the Events API over HTTP (signed
requests). Settings: ``platforms.slack`` in config.yaml, ``SLACK_BOT_TOKEN``,
``SLACK_APP_TOKEN``, ``SLACK_SIGNING_SECRET`` (environment or .env only),
``SLACK_ALLOWED_USERS``, ``SLACK_HOME_CHANNEL``; see docs/gateway.md."""

from __future__ import annotations

import importlib.util
from typing import Any

from .settings import Settings, SettingsError, load

__all__ = ["Settings", "SettingsError", "register"]
INSTALL_HINT = "pip install 'hermes-agent-runtime[platform-slack]'"
PROMPT_HINT = ("You are chatting on Slack. Slack shows mrkdwn: *bold*, _italics_, `code` and "
               "code blocks work, tables and headings do not; a thread is one conversation.")


def available() -> bool:
    return all(importlib.util.find_spec(m) for m in ("slack_sdk", "aiohttp"))


def register(ctx: Any) -> None:
    kernel = ctx.kernel

    def factory(config: Any) -> Any:
        # SettingsError says what to set
        settings = load(config, kernel.env, kernel.config.get("slack"))
        if settings.mode == "http" and not all(
                importlib.util.find_spec(m) for m in ("starlette", "uvicorn")):
            raise SettingsError(f"the Events API over HTTP needs starlette and uvicorn: "
                                f"{INSTALL_HINT}")
        from .adapter import SlackAdapter

        return SlackAdapter(config, settings, kernel.home,
                            commands=lambda: kernel.registered("slash_command"))

    ctx.register_platform("slack", "Slack", adapter_factory=factory, check_fn=available,
                          install_hint=INSTALL_HINT, allowed_users_env="SLACK_ALLOWED_USERS",
                          max_message_length=39000, prompt_hint=PROMPT_HINT)

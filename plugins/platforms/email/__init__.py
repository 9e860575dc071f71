"""The email platform: the agent answers mail. IMAP in (IDLE where the server offers it, else
polling), SMTP out, each thread its own session. Settings: ``platforms.email`` in config.yaml
and the variables of Hermes Agent 0.19 (``EMAIL_ADDRESS``, ``EMAIL_PASSWORD``,
``EMAIL_IMAP_HOST``, ``EMAIL_SMTP_HOST``, ``EMAIL_ALLOWED_USERS``, ...); see docs/gateway.md."""

from __future__ import annotations

import importlib.util
from typing import Any

from .settings import Settings, SettingsError, load

__all__ = ["Settings", "SettingsError", "register"]
INSTALL_HINT = "pip install 'hermes-agent-runtime[platform-email]'"


def available() -> bool:
    return importlib.util.find_spec("imapclient") is not None


def register(ctx: Any) -> None:
    kernel = ctx.kernel

    def factory(config: Any) -> Any:
        settings = load(config, kernel.env)  # SettingsError says what to set
        if not available():
            raise SettingsError(f"email needs imapclient: {INSTALL_HINT}")
        from .adapter import EmailAdapter

        return EmailAdapter(config, settings, kernel.home)

    ctx.register_platform("email", "Email", adapter_factory=factory, check_fn=available,
                          install_hint=INSTALL_HINT, allowed_users_env="EMAIL_ALLOWED_USERS",
                          max_message_length=50_000)

"""The Signal platform, through signal-cli's HTTP daemon (JSON-RPC and its event stream; no
extra Python library). Settings: ``platforms.signal`` in config.yaml, ``SIGNAL_HTTP_URL``,
``SIGNAL_ACCOUNT``, ``SIGNAL_ALLOWED_USERS``, ``SIGNAL_GROUP_ALLOWED_USERS``; see
docs/gateway.md."""

from __future__ import annotations

from typing import Any

from .settings import Settings, SettingsError, load

__all__ = ["Settings", "SettingsError", "register"]
PROMPT_HINT = ("You are chatting on Signal, which shows plain text: no markdown, headings or "
               "tables. Keep replies short.")


def register(ctx: Any) -> None:
    kernel = ctx.kernel

    def factory(config: Any) -> Any:
        settings = load(config, kernel.env)  # SettingsError says what to set
        from .adapter import SignalAdapter

        return SignalAdapter(config, settings, kernel.home / "gateway" / "signal-events.json")

    ctx.register_platform("signal", "Signal", adapter_factory=factory, check_fn=lambda: True,
                          allowed_users_env="SIGNAL_ALLOWED_USERS",
                          allow_all_env="SIGNAL_ALLOW_ALL_USERS", max_message_length=8000,
                          prompt_hint=PROMPT_HINT)

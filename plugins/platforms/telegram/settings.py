"""The Telegram platform's settings: ``platforms.telegram`` in config.yaml (or its ``extra``),
then the environment, then the defaults. The bot token (``TELEGRAM_BOT_TOKEN``) and the
webhook secret (``TELEGRAM_WEBHOOK_SECRET``) come only from the environment or ``.env``, and
are never part of a repr, a log line or an error message."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from hermes_agent.kits.asgi import ClientLimits, client_limits
from hermes_agent.kits.platform_config import config_secret, id_set, platform_setting
from urllib.parse import urlsplit

DEFAULT_BASE_URL = "https://api.telegram.org"
DEFAULT_HOST, DEFAULT_PORT, DEFAULT_PATH = "127.0.0.1", 8443, "/telegram/webhook"
MODES = ("polling", "webhook")
# Telegram's rule for secret_token: 1-256 characters, A-Z, a-z, 0-9, _ and -.
_SECRET_CHARS = re.compile(r"^[A-Za-z0-9_-]{1,256}\Z")


class SettingsError(ValueError):
    """The platform must not start; the message says what to set."""


@dataclass(frozen=True)
class Settings:
    token: str = field(repr=False)
    base_url: str = DEFAULT_BASE_URL
    mode: str = "polling"
    poll_timeout: int = 30  # getUpdates long-poll seconds
    webhook_url: str = ""  # the public URL Telegram posts updates to
    webhook_secret: str = field(default="", repr=False)
    host: str = DEFAULT_HOST  # where the webhook server listens
    port: int = DEFAULT_PORT
    path: str = DEFAULT_PATH
    allowed_chats: frozenset[str] = frozenset()  # group/channel ids; empty: every group
    limits: ClientLimits = field(default_factory=ClientLimits)  # webhook mode's server

    @property
    def secrets(self) -> tuple[str, ...]:
        return tuple(s for s in (self.token, self.webhook_secret) if s)


#: config.yaml keys a secret might be written under -> the variable it belongs in
SECRET_KEYS = {"token": "TELEGRAM_BOT_TOKEN", "bot_token": "TELEGRAM_BOT_TOKEN",
               "webhook_secret": "TELEGRAM_WEBHOOK_SECRET",
               "secret_token": "TELEGRAM_WEBHOOK_SECRET"}


def load(config: Mapping[str, Any], env: Mapping[str, str]) -> Settings:
    """The settings, or :class:`SettingsError` when the platform must refuse to start."""
    def pick(name: str, env_name: str | None, default: Any) -> Any:
        return platform_setting(config, env, name, env_name, default)

    secret = config_secret(config, *SECRET_KEYS)
    if secret:
        raise SettingsError(f"do not put the {secret} in config.yaml; set {SECRET_KEYS[secret]} "
                            "in the environment or $HERMES_HOME/.env instead")
    token = env.get("TELEGRAM_BOT_TOKEN", "").strip()
    if not token:
        raise SettingsError("no bot token: set TELEGRAM_BOT_TOKEN in the environment or "
                            "$HERMES_HOME/.env (ask @BotFather for one)")
    webhook_url = str(pick("webhook_url", "TELEGRAM_WEBHOOK_URL", ""))
    mode = str(pick("mode", "TELEGRAM_MODE", "webhook" if webhook_url else "polling")).lower()
    if mode not in MODES:
        raise SettingsError(f"platforms.telegram.mode must be 'polling' or 'webhook', not {mode!r}")
    try:
        port = int(pick("port", "TELEGRAM_WEBHOOK_PORT", DEFAULT_PORT))
        poll_timeout = int(pick("poll_timeout", "", 30))
    except ValueError:
        raise SettingsError("platforms.telegram.port and poll_timeout must be numbers") from None
    secret = env.get("TELEGRAM_WEBHOOK_SECRET", "").strip()
    if mode == "webhook":
        if not webhook_url:
            raise SettingsError("webhook mode needs the public URL Telegram posts to: set "
                                "platforms.telegram.webhook_url (or TELEGRAM_WEBHOOK_URL)")
        if not secret:
            raise SettingsError("refusing to start in webhook mode without a secret: set "
                                "TELEGRAM_WEBHOOK_SECRET in the environment or $HERMES_HOME/.env "
                                "(1-256 characters: letters, digits, _ and -)")
        if not _SECRET_CHARS.match(secret):
            raise SettingsError("TELEGRAM_WEBHOOK_SECRET may only hold letters, digits, _ and - "
                                "(1-256 characters); choose another")
    path = str(pick("path", "TELEGRAM_WEBHOOK_PATH", urlsplit(webhook_url).path or DEFAULT_PATH))
    try:
        limits = client_limits(config, "platforms.telegram")
    except ValueError as exc:
        raise SettingsError(str(exc)) from None
    return Settings(
        limits=limits,
        token=token, base_url=str(pick("base_url", "TELEGRAM_BASE_URL", DEFAULT_BASE_URL)),
        mode=mode, poll_timeout=max(0, poll_timeout), webhook_url=webhook_url,
        webhook_secret=secret, host=str(pick("host", "TELEGRAM_WEBHOOK_HOST", DEFAULT_HOST)),
        port=port, path=path if path.startswith("/") else f"/{path}",
        allowed_chats=id_set(pick("allowed_chats", "TELEGRAM_ALLOWED_CHATS", None)))

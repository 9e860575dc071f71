"""The webhook's settings: ``platforms.webhook`` in config.yaml (or its ``extra``), then the
environment (``WEBHOOK_HOST``, ``WEBHOOK_PORT``, ``WEBHOOK_PATH``, ``WEBHOOK_REPLY_URL``), then
the defaults. The secret comes only from the environment or ``.env`` (``WEBHOOK_SECRET``) and
is never logged."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from hermes_agent.kits.asgi import ClientLimits, client_limits
from hermes_agent.kits.platform_config import config_secret, platform_setting
from urllib.parse import urlsplit

DEFAULT_HOST, DEFAULT_PORT, DEFAULT_PATH = "127.0.0.1", 8644, "/webhook"
TRUE = ("1", "true", "yes", "on")
NEW_SECRET = "python3 -c 'import secrets; print(secrets.token_hex(32))'"


class SettingsError(ValueError):
    """The webhook must not start; the message says what to set."""


@dataclass(frozen=True)
class Settings:
    reply_url: str
    secret: str = field(repr=False)
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    path: str = DEFAULT_PATH
    require_timestamp: bool = False
    timestamp_tolerance: float = 300.0
    reply_timeout: float = 10.0
    max_body_bytes: int = 1_000_000
    limits: ClientLimits = field(default_factory=ClientLimits)

    @property
    def reply_target(self) -> str:
        """``reply_url`` without its query or credentials: what may be logged."""
        url = urlsplit(self.reply_url)
        return f"{url.scheme}://{url.hostname}{f':{url.port}' if url.port else ''}{url.path}"


def load(config: Mapping[str, Any], env: Mapping[str, str]) -> Settings:
    """The settings, or :class:`SettingsError` when the webhook must refuse to start."""
    def pick(name: str, env_name: str | None, default: Any) -> Any:
        return platform_setting(config, env, name, env_name, default)

    def number(name: str, env_name: str | None, default: float, kind: type = float) -> Any:
        try:
            return kind(pick(name, env_name, default))
        except ValueError:
            where = f"platforms.webhook.{name}" + (f" or {env_name}" if env_name else "")
            raise SettingsError(f"{where} must be a number") from None

    if config_secret(config, "secret"):
        raise SettingsError("do not put the secret in config.yaml; set WEBHOOK_SECRET in the "
                            "environment or $HERMES_HOME/.env instead")
    secret = env.get("WEBHOOK_SECRET", "").strip()
    if not secret:
        raise SettingsError("refusing to start without a secret: set WEBHOOK_SECRET in the "
                            f"environment or $HERMES_HOME/.env (make one with: {NEW_SECRET})")
    reply_url = str(pick("reply_url", "WEBHOOK_REPLY_URL", "")).strip()
    if urlsplit(reply_url).scheme not in ("http", "https") or not urlsplit(reply_url).hostname:
        raise SettingsError("set platforms.webhook.reply_url (or WEBHOOK_REPLY_URL) to the "
                            "http(s) URL the agent's replies are POSTed to")
    path = str(pick("path", "WEBHOOK_PATH", DEFAULT_PATH))
    if not path.startswith("/"):
        raise SettingsError("platforms.webhook.path must start with '/', e.g. /webhook")
    try:
        limits = client_limits(config, "platforms.webhook")
    except ValueError as exc:
        raise SettingsError(str(exc)) from None
    return Settings(limits=limits,
        reply_url=reply_url, secret=secret,
        host=str(pick("host", "WEBHOOK_HOST", DEFAULT_HOST)),
        port=number("port", "WEBHOOK_PORT", DEFAULT_PORT, int), path=path,
        require_timestamp=str(pick("require_timestamp", None, False)).lower() in TRUE,
        timestamp_tolerance=number("timestamp_tolerance", None, 300.0),
        reply_timeout=number("reply_timeout", None, 10.0),
        max_body_bytes=number("max_body_bytes", None, 1_000_000, int))

"""The api-server's settings: ``platforms.api_server`` in config.yaml (or its ``extra``), then
the environment (``API_SERVER_HOST``, ``API_SERVER_PORT``), then the defaults. The key comes
only from the environment or ``.env`` (``API_SERVER_KEY``) and is never logged."""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from hermes_agent.kits.asgi import ClientLimits, client_limits
from hermes_agent.kits.platform_config import config_secret, platform_setting

DEFAULT_HOST, DEFAULT_PORT, DEFAULT_MODEL = "127.0.0.1", 8642, "hermes-agent"
ONESHOT = "oneshot-"  # the chat of a request that names no conversation: one turn
DEFAULT_MAX_BODY = 16_000_000  # bytes: a long conversation's history, images included
TRUE = ("1", "true", "yes", "on")


class SettingsError(ValueError):
    """The server must not start; the message says what to set."""


@dataclass(frozen=True)
class Settings:
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    key: str = field(default="", repr=False)
    allow_unauthenticated_loopback: bool = False
    model_name: str = DEFAULT_MODEL
    max_body_bytes: int = DEFAULT_MAX_BODY
    limits: ClientLimits = field(default_factory=ClientLimits)

    @property
    def open(self) -> bool:
        """True when requests need no key (no key set, loopback, explicitly allowed)."""
        return not self.key


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def load(config: Mapping[str, Any], env: Mapping[str, str]) -> Settings:
    """The settings, or :class:`SettingsError` when the server must refuse to start."""
    def pick(name: str, env_name: str | None, default: Any) -> Any:
        return platform_setting(config, env, name, env_name, default)

    if config_secret(config, "key"):
        raise SettingsError("do not put the key in config.yaml; set API_SERVER_KEY "
                            "in the environment or $HERMES_HOME/.env instead")
    host = str(pick("host", "API_SERVER_HOST", DEFAULT_HOST))
    try:
        port = int(pick("port", "API_SERVER_PORT", DEFAULT_PORT))
    except ValueError:
        raise SettingsError("the port must be a number; fix platforms.api_server."
                            "port or API_SERVER_PORT") from None
    try:
        max_body = int(pick("max_body_bytes", "", DEFAULT_MAX_BODY))
    except ValueError:
        raise SettingsError("platforms.api_server.max_body_bytes must be a number "
                            "(bytes)") from None
    try:
        limits = client_limits(config, "platforms.api_server")
    except ValueError as exc:
        raise SettingsError(str(exc)) from None
    allow = str(pick("allow_unauthenticated_loopback", "", False)).lower() in TRUE
    settings = Settings(host, port, env.get("API_SERVER_KEY", "").strip(), allow,
                        str(pick("model_name", "", DEFAULT_MODEL)), max_body, limits)
    if not settings.key and not (allow and is_loopback(host)):
        where = "" if is_loopback(host) else (
            f" (allow_unauthenticated_loopback only applies on 127.0.0.1, not {host})")
        raise SettingsError(
            "refusing to start without a key: set API_SERVER_KEY in the environment "
            "or $HERMES_HOME/.env, or bind it to 127.0.0.1 with platforms.api_server."
            f"allow_unauthenticated_loopback: true{where}")
    return settings

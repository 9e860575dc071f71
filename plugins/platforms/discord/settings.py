"""The Discord platform's settings: ``platforms.discord`` in config.yaml (or its ``extra``),
then the environment, then the defaults. The bot token comes only from the environment or
``$HERMES_HOME/.env`` (``DISCORD_BOT_TOKEN``) and is never logged or shown in a repr."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from hermes_agent.kits.platform_config import config_secret, id_set, platform_setting

API_BASE = "https://discord.com/api/v10"
TOKEN_ENV = "DISCORD_BOT_TOKEN"
# GUILDS | GUILD_MESSAGES | DIRECT_MESSAGES | MESSAGE_CONTENT (a privileged intent: turn it on
# for the bot in the Developer Portal)
INTENTS = (1 << 0) | (1 << 9) | (1 << 12) | (1 << 15)


class SettingsError(ValueError):
    """The platform must not start; the message says what to set."""


@dataclass(frozen=True)
class Settings:
    token: str = field(default="", repr=False)
    api_base: str = API_BASE
    gateway_url: str = ""  # empty: asked from GET /gateway/bot
    allowed_guilds: frozenset[str] = frozenset()  # empty: every guild the bot is in
    intents: int = INTENTS
    connect_timeout: float = 30.0  # until READY
    reconnect_delay: float = 1.0  # the first wait before reconnecting; doubles up to 60 s
    invalid_session_delay: float = 2.0  # Discord asks for 1-5 s before identifying again


def load(config: Mapping[str, Any], env: Mapping[str, str]) -> Settings:
    """The settings, or :class:`SettingsError` when the platform cannot start."""
    def pick(name: str, env_name: str | None, default: Any) -> Any:
        return platform_setting(config, env, name, env_name, default)

    if config_secret(config, "token"):
        raise SettingsError(f"do not put the bot token in config.yaml; set {TOKEN_ENV} in "
                            "the environment or $HERMES_HOME/.env instead")
    token = env.get(TOKEN_ENV, "").strip()
    if not token:
        raise SettingsError(f"no bot token: set {TOKEN_ENV} in the environment or "
                            "$HERMES_HOME/.env (Developer Portal > your application > Bot)")
    try:
        intents = int(pick("intents", "", INTENTS))
        delays = {name: float(pick(name, "", default)) for name, default in (
            ("connect_timeout", 30.0), ("reconnect_delay", 1.0), ("invalid_session_delay", 2.0))}
    except (TypeError, ValueError):
        raise SettingsError("platforms.discord.intents and the delays must be numbers") from None
    return Settings(token=token,
                    api_base=str(pick("api_base", "DISCORD_API_BASE", API_BASE)).rstrip("/"),
                    gateway_url=str(pick("gateway_url", "DISCORD_GATEWAY_URL", "")),
                    allowed_guilds=id_set(pick("allowed_guilds", "DISCORD_ALLOWED_GUILDS", None)),
                    intents=intents, **delays)

"""The Slack platform's settings: ``platforms.slack`` in config.yaml (or its ``extra``, where
the original kept most of them), then the environment, then the defaults. The bot token
(``SLACK_BOT_TOKEN``), the app-level token (``SLACK_APP_TOKEN``) and the signing secret
(``SLACK_SIGNING_SECRET``) come only from the environment or ``$HERMES_HOME/.env`` and are
never part of a repr, a log line or an error message."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from hermes_agent.kits.asgi import ClientLimits, client_limits
from hermes_agent.kits.platform_config import config_secret, id_set, platform_setting

API_BASE = "https://slack.com/api/"
DEFAULT_HOST, DEFAULT_PORT, DEFAULT_PATH = "127.0.0.1", 3000, "/slack/events"
MODES = ("socket", "http")
ALLOW_BOTS = ("none", "mentions", "all")
MAX_ATTACHMENT_BYTES = 20_000_000

#: config.yaml keys a secret might be written under -> the variable it belongs in
SECRET_KEYS = {"token": "SLACK_BOT_TOKEN", "bot_token": "SLACK_BOT_TOKEN",
               "app_token": "SLACK_APP_TOKEN", "signing_secret": "SLACK_SIGNING_SECRET"}


class SettingsError(ValueError):
    """The platform must not start; the message says what to set."""


@dataclass(frozen=True)
class Settings:
    bot_token: str = field(default="", repr=False)  # xoxb-...
    app_token: str = field(default="", repr=False)  # xapp-..., Socket Mode
    signing_secret: str = field(default="", repr=False)  # the Events API over HTTP
    mode: str = "socket"
    api_base: str = API_BASE  # the Web API, ending with "/" (slack-sdk's base_url)
    host: str = DEFAULT_HOST  # where the Events API server listens (http mode)
    port: int = DEFAULT_PORT
    path: str = DEFAULT_PATH
    allowed_channels: frozenset[str] = frozenset()  # empty: every channel the bot is in
    free_response_channels: frozenset[str] = frozenset()  # answered without a mention
    require_mention: bool = True  # in channels (DMs never need one)
    reply_in_thread: bool = True  # a top-level channel message is answered in its thread
    allow_bots: str = "none"
    home_channel: str = ""
    home_channel_name: str = ""
    max_attachment_bytes: int = MAX_ATTACHMENT_BYTES
    connect_timeout: float = 30.0
    ping_interval: float = 5.0  # Socket Mode's pings; silent 4 times as long: a new connection
    limits: ClientLimits = field(default_factory=ClientLimits)

    @property
    def secrets(self) -> tuple[str, ...]:
        return tuple(s for s in (self.bot_token, self.app_token, self.signing_secret) if s)


def _flag(value: Any, name: str) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    raise SettingsError(f"platforms.slack.{name} must be true or false, not {value!r}")


def load(config: Mapping[str, Any], env: Mapping[str, str],
         legacy: Mapping[str, Any] | None = None) -> Settings:
    """The settings, or :class:`SettingsError` when the platform must refuse to start.
    ``legacy``: the original's top-level ``slack:`` section of config.yaml
    (``require_mention``, ``allowed_channels``...), read below ``platforms.slack``'s keys."""
    if isinstance(legacy, Mapping) and legacy:
        config = {**{k: v for k, v in legacy.items() if k != "extra"}, **config}
    def pick(name: str, env_name: str | None, default: Any) -> Any:
        return platform_setting(config, env, name, env_name, default)

    secret = config_secret(config, *SECRET_KEYS)
    if secret:
        raise SettingsError(f"do not put the {secret} in config.yaml; set {SECRET_KEYS[secret]} "
                            "in the environment or $HERMES_HOME/.env instead")
    bot_token = env.get("SLACK_BOT_TOKEN", "").strip()
    if not bot_token:
        raise SettingsError("no bot token: set SLACK_BOT_TOKEN (xoxb-..., your app's OAuth & "
                            "Permissions page) in the environment or $HERMES_HOME/.env")
    if "," in bot_token:
        raise SettingsError("SLACK_BOT_TOKEN holds several tokens; this version serves one "
                            "workspace: keep the one of the workspace to serve")
    app_token = env.get("SLACK_APP_TOKEN", "").strip()
    signing_secret = env.get("SLACK_SIGNING_SECRET", "").strip()
    mode = str(pick("mode", "SLACK_MODE", "socket" if app_token or not signing_secret
                    else "http")).lower()
    if mode not in MODES:
        raise SettingsError(f"platforms.slack.mode must be 'socket' or 'http', not {mode!r}")
    if mode == "socket" and not app_token:
        raise SettingsError("Socket Mode needs the app-level token: set SLACK_APP_TOKEN "
                            "(xapp-..., Basic Information > App-Level Tokens, scope "
                            "connections:write), or SLACK_SIGNING_SECRET with "
                            "platforms.slack.mode: http for the Events API over HTTP")
    if mode == "http" and not signing_secret:
        raise SettingsError("refusing to receive the Events API over HTTP without the signing "
                            "secret: set SLACK_SIGNING_SECRET (Basic Information > App "
                            "Credentials) in the environment or $HERMES_HOME/.env")
    allow_bots = str(pick("allow_bots", "SLACK_ALLOW_BOTS", "none")).lower()
    if allow_bots not in ALLOW_BOTS:
        raise SettingsError(f"platforms.slack.allow_bots must be one of {', '.join(ALLOW_BOTS)}")
    try:
        port = int(pick("port", "SLACK_PORT", DEFAULT_PORT))
        max_bytes = int(pick("max_attachment_bytes", "", MAX_ATTACHMENT_BYTES))
        connect_timeout = float(pick("connect_timeout", "", 30.0))
        ping_interval = float(pick("ping_interval", "", 5.0))
    except (TypeError, ValueError):
        raise SettingsError("platforms.slack.port, max_attachment_bytes, connect_timeout and "
                            "ping_interval must be numbers") from None
    if not 0 < ping_interval < 3600:
        raise SettingsError("platforms.slack.ping_interval must be a number of seconds above 0")
    try:
        limits = client_limits(config, "platforms.slack")
    except ValueError as exc:
        raise SettingsError(str(exc)) from None
    api_base = str(pick("api_base", "SLACK_API_BASE", API_BASE))
    path = str(pick("path", "SLACK_EVENTS_PATH", DEFAULT_PATH))
    return Settings(
        bot_token=bot_token, app_token=app_token, signing_secret=signing_secret, mode=mode,
        api_base=api_base if api_base.endswith("/") else api_base + "/",
        host=str(pick("host", "SLACK_HOST", DEFAULT_HOST)), port=port,
        path=path if path.startswith("/") else f"/{path}",
        allowed_channels=id_set(pick("allowed_channels", "SLACK_ALLOWED_CHANNELS", None)),
        free_response_channels=id_set(pick("free_response_channels",
                                           "SLACK_FREE_RESPONSE_CHANNELS", None)),
        require_mention=_flag(pick("require_mention", "SLACK_REQUIRE_MENTION", True),
                              "require_mention"),
        reply_in_thread=_flag(pick("reply_in_thread", "SLACK_REPLY_IN_THREAD", True),
                              "reply_in_thread"),
        allow_bots=allow_bots,
        home_channel=str(pick("home_channel", "SLACK_HOME_CHANNEL", "")),
        home_channel_name=str(pick("home_channel_name", "SLACK_HOME_CHANNEL_NAME", "")),
        max_attachment_bytes=max(0, max_bytes), connect_timeout=connect_timeout,
        ping_interval=ping_interval, limits=limits)

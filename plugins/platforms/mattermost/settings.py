"""The Mattermost platform's settings: ``platforms.mattermost`` in config.yaml (or its
``extra``), then the environment (the original's names: ``MATTERMOST_URL``,
``MATTERMOST_REQUIRE_MENTION``, ``MATTERMOST_FREE_RESPONSE_CHANNELS``,
``MATTERMOST_ALLOWED_CHANNELS``), then the defaults. The token comes only from the
environment or ``$HERMES_HOME/.env`` (``MATTERMOST_TOKEN``) and is never logged."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from hermes_agent.kits.chat_media import MAX_ATTACHMENT_BYTES
from hermes_agent.kits.platform_config import (PlatformSettingsError, env_secret, flag, id_set,
                                               number_settings, platform_setting)

SECTION = "platforms.mattermost"
TOKEN_ENV = "MATTERMOST_TOKEN"
MAX_POST = 16383  # the server's MaxPostSize (characters) since Mattermost 5.0
SettingsError = PlatformSettingsError


@dataclass(frozen=True)
class Settings:
    url: str  # the server, e.g. https://mm.example.com (no /api/v4)
    token: str = field(repr=False)
    websocket_url: str = ""
    require_mention: bool = True  # in channels; direct and group messages need none
    free_channels: frozenset[str] = frozenset()  # channels answered without a mention
    allowed_channels: frozenset[str] = frozenset()  # empty: every channel the bot is in
    max_message_length: int = MAX_POST
    max_attachment_bytes: int = MAX_ATTACHMENT_BYTES
    reconnect_delay: float = 1.0
    max_reconnect_delay: float = 60.0

    @property
    def api(self) -> str:
        return f"{self.url}/api/v4"


def websocket_url(server: str) -> str:
    """``/api/v4/websocket`` on the server, ``ws://`` for ``http://``, ``wss://`` for
    ``https://``."""
    parts = urlsplit(server)
    scheme = "wss" if parts.scheme == "https" else "ws"
    return urlunsplit((scheme, parts.netloc, f"{parts.path.rstrip('/')}/api/v4/websocket", "",
                       ""))


def load(config: Mapping[str, Any], env: Mapping[str, str]) -> Settings:
    def pick(name: str, env_name: str | None, default: Any) -> Any:
        return platform_setting(config, env, name, env_name, default)

    token = env_secret(config, env, TOKEN_ENV, "token", "bot_token", section=SECTION,
                       required="the bot account's token: Integrations > Bot Accounts")
    url = str(pick("url", "MATTERMOST_URL", "")).strip().rstrip("/")
    if url.endswith("/api/v4"):
        url = url[: -len("/api/v4")]
    if not url.startswith(("http://", "https://")):
        raise SettingsError("set MATTERMOST_URL (or platforms.mattermost.url) to the server's "
                            "address, e.g. https://mm.example.com")
    numbers = number_settings(config, env, SECTION, max_message_length=(None, MAX_POST),
                              max_attachment_bytes=(None, MAX_ATTACHMENT_BYTES),
                              reconnect_delay=(None, 1.0), max_reconnect_delay=(None, 60.0))
    return Settings(
        url=url, token=token,
        websocket_url=str(pick("websocket_url", None, "")) or websocket_url(url),
        require_mention=flag(pick("require_mention", "MATTERMOST_REQUIRE_MENTION", True)),
        free_channels=id_set(pick("free_response_channels", "MATTERMOST_FREE_RESPONSE_CHANNELS",
                                  None)),
        allowed_channels=id_set(pick("allowed_channels", "MATTERMOST_ALLOWED_CHANNELS", None)),
        max_message_length=int(numbers["max_message_length"]),
        max_attachment_bytes=int(numbers["max_attachment_bytes"]),
        reconnect_delay=numbers["reconnect_delay"],
        max_reconnect_delay=numbers["max_reconnect_delay"])

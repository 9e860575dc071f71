"""The Signal platform's settings: ``platforms.signal`` in config.yaml (or its ``extra``), then
the environment (the original's names: ``SIGNAL_HTTP_URL``, ``SIGNAL_ACCOUNT``,
``SIGNAL_GROUP_ALLOWED_USERS``), then the defaults. signal-cli holds the account's keys; this
side has no secret."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hermes_agent.kits.chat_media import MAX_ATTACHMENT_BYTES
from hermes_agent.kits.platform_config import (PlatformSettingsError, id_set, number_settings,
                                               platform_setting)

SECTION = "platforms.signal"
SettingsError = PlatformSettingsError


@dataclass(frozen=True)
class Settings:
    http_url: str  # signal-cli's HTTP daemon: `signal-cli -a ACCOUNT daemon --http HOST:PORT`
    account: str  # the bot's number (E.164) or ACI
    groups: frozenset[str] = frozenset()  # group ids answered; "*": every group; empty: none
    max_attachment_bytes: int = MAX_ATTACHMENT_BYTES
    reconnect_delay: float = 1.0  # doubling up to max_reconnect_delay
    max_reconnect_delay: float = 60.0

    def answers_group(self, group_id: str) -> bool:
        return "*" in self.groups or group_id in self.groups


def load(config: Mapping[str, Any], env: Mapping[str, str]) -> Settings:
    def pick(name: str, env_name: str | None, default: Any) -> Any:
        return platform_setting(config, env, name, env_name, default)

    url = str(pick("http_url", "SIGNAL_HTTP_URL", "")).strip().rstrip("/")
    if not url.startswith(("http://", "https://")):
        raise SettingsError("set SIGNAL_HTTP_URL (or platforms.signal.http_url) to signal-cli's "
                            "HTTP daemon, e.g. http://127.0.0.1:8080 (started with "
                            "`signal-cli -a +15551234567 daemon --http 127.0.0.1:8080`)")
    account = str(pick("account", "SIGNAL_ACCOUNT", "")).strip()
    if not account:
        raise SettingsError("set SIGNAL_ACCOUNT (or platforms.signal.account) to the bot's "
                            "Signal number in E.164 form, e.g. +15551234567")
    numbers = number_settings(config, env, SECTION, max_attachment_bytes=(None,
                                                                          MAX_ATTACHMENT_BYTES),
                              reconnect_delay=(None, 1.0), max_reconnect_delay=(None, 60.0))
    return Settings(http_url=url, account=account,
                    groups=id_set(pick("group_allowed_users", "SIGNAL_GROUP_ALLOWED_USERS", None)),
                    max_attachment_bytes=int(numbers["max_attachment_bytes"]),
                    reconnect_delay=numbers["reconnect_delay"],
                    max_reconnect_delay=numbers["max_reconnect_delay"])

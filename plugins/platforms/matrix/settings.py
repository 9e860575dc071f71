"""The Matrix platform's settings: ``platforms.matrix`` in config.yaml (or its ``extra``), then
the environment (the original's ``MATRIX_*`` variables), then the defaults. The access token and
the password come only from the environment or ``$HERMES_HOME/.env`` and are never part of a
repr, a log line or an error message."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from hermes_agent.kits.platform_config import config_secret, id_set, platform_setting

TRUE, FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")
#: config.yaml keys a secret might be written under -> the variable it belongs in
SECRET_KEYS = {"access_token": "MATRIX_ACCESS_TOKEN", "token": "MATRIX_ACCESS_TOKEN",
               "password": "MATRIX_PASSWORD"}
MAX_ATTACHMENT_BYTES = 20_000_000


class SettingsError(ValueError):
    """The platform must not start; the message says what to set."""


@dataclass(frozen=True)
class Settings:
    homeserver: str
    user_id: str = ""  # @bot:example.org; asked from /whoami when only a token is given
    access_token: str = field(default="", repr=False)
    password: str = field(default="", repr=False)
    device_id: str = ""
    device_name: str = "Hermes Agent"
    require_mention: bool = True  # in rooms (not DMs) answer only messages that mention the bot
    free_response_rooms: frozenset[str] = frozenset()  # rooms answered without a mention
    allowed_users: frozenset[str] = frozenset()  # who may invite the bot (joins are automatic)
    allow_all_users: bool = False
    #: MATRIX_ENCRYPTION=true: not supported here (see docs/gateway.md); warned about at start
    encryption_requested: bool = False
    sync_timeout: float = 30.0  # the /sync long poll, seconds
    connect_timeout: float = 30.0
    max_attachment_bytes: int = MAX_ATTACHMENT_BYTES

    @property
    def secrets(self) -> tuple[str, ...]:
        return tuple(s for s in (self.access_token, self.password) if s)


def _flag(value: Any, name: str) -> bool:
    text = str(value).strip().lower()
    if text in TRUE:
        return True
    if text in FALSE:
        return False
    raise SettingsError(f"platforms.matrix.{name} must be true or false, not {value!r}")


def load(config: Mapping[str, Any], env: Mapping[str, str]) -> Settings:
    """The settings, or :class:`SettingsError` when the platform must refuse to start."""
    def pick(name: str, env_name: str | None, default: Any) -> Any:
        return platform_setting(config, env, name, env_name, default)

    secret = config_secret(config, *SECRET_KEYS)
    if secret:
        raise SettingsError(f"do not put the {secret} in config.yaml; set {SECRET_KEYS[secret]} "
                            "in the environment or $HERMES_HOME/.env instead")
    homeserver = str(pick("homeserver", "MATRIX_HOMESERVER", "")).strip().rstrip("/")
    if not homeserver:
        raise SettingsError("no homeserver: set MATRIX_HOMESERVER (e.g. https://matrix.org) "
                            "or platforms.matrix.homeserver")
    if urlsplit(homeserver).scheme not in ("http", "https"):
        raise SettingsError(f"MATRIX_HOMESERVER must be an http(s) URL such as "
                            f"https://matrix.example.org, not {homeserver!r}")
    token = env.get("MATRIX_ACCESS_TOKEN", "").strip()
    password = env.get("MATRIX_PASSWORD", "")
    user_id = str(pick("user_id", "MATRIX_USER_ID", "")).strip()
    if not token and not password:
        raise SettingsError("no credentials: set MATRIX_ACCESS_TOKEN, or MATRIX_USER_ID and "
                            "MATRIX_PASSWORD, in the environment or $HERMES_HOME/.env")
    if password and not token and not user_id:
        raise SettingsError("password login needs the bot's user id: set MATRIX_USER_ID "
                            "(e.g. @hermes:example.org)")
    if user_id and not (user_id.startswith("@") and ":" in user_id):
        raise SettingsError(f"MATRIX_USER_ID must be a full Matrix id such as "
                            f"@hermes:example.org, not {user_id!r}")
    # the gateway's own allow-list, read the same way: who may invite the bot into a room
    allowed = (id_set(config.get("allowed_users")) | id_set(env.get("MATRIX_ALLOWED_USERS"))
               | id_set(env.get("GATEWAY_ALLOWED_USERS")))
    anyone = any(str(v).strip().lower() in TRUE for v in (
        config.get("allow_all_users", ""), env.get("MATRIX_ALLOW_ALL_USERS", ""),
        env.get("GATEWAY_ALLOW_ALL_USERS", "")))
    try:
        numbers = {name: float(pick(name, "", default)) for name, default in (
            ("sync_timeout", 30.0), ("connect_timeout", 30.0))}
        max_bytes = int(pick("max_attachment_bytes", "", MAX_ATTACHMENT_BYTES))
    except (TypeError, ValueError):
        raise SettingsError("platforms.matrix.sync_timeout, connect_timeout and "
                            "max_attachment_bytes must be numbers") from None
    return Settings(
        homeserver=homeserver, user_id=user_id, access_token=token, password=password,
        device_id=str(pick("device_id", "MATRIX_DEVICE_ID", "")).strip(),
        device_name=str(pick("device_name", "", "Hermes Agent")),
        require_mention=_flag(pick("require_mention", "MATRIX_REQUIRE_MENTION", "true"),
                              "require_mention"),
        free_response_rooms=id_set(pick("free_response_rooms", "MATRIX_FREE_RESPONSE_ROOMS",
                                        None)),
        encryption_requested=_flag(pick("encryption", "MATRIX_ENCRYPTION", "false"),
                                   "encryption"),
        allowed_users=allowed, allow_all_users=anyone, max_attachment_bytes=max(0, max_bytes),
        **numbers)

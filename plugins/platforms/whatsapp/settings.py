"""The WhatsApp (Cloud API) platform's settings: ``platforms.whatsapp_cloud`` in config.yaml
(or its ``extra``), then the environment (the original's ``WHATSAPP_CLOUD_*`` names), then the
defaults. The access token, the app secret and the verify token come only from the
environment or ``$HERMES_HOME/.env`` and are never logged or shown in a repr."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from hermes_agent.kits.asgi import ClientLimits, client_limits
from hermes_agent.kits.chat_media import MAX_ATTACHMENT_BYTES
from hermes_agent.kits.platform_config import (PlatformSettingsError, env_secret,
                                               number_settings, platform_setting)

SECTION = "platforms.whatsapp_cloud"
GRAPH_URL = "https://graph.facebook.com"
DEFAULT_HOST, DEFAULT_PORT, DEFAULT_PATH = "127.0.0.1", 8090, "/whatsapp/webhook"
API_VERSION = "v20.0"
SettingsError = PlatformSettingsError


@dataclass(frozen=True)
class Settings:
    phone_number_id: str
    access_token: str = field(repr=False)
    app_secret: str = field(repr=False)
    verify_token: str = field(repr=False)
    graph_url: str = GRAPH_URL
    api_version: str = API_VERSION
    waba_id: str = ""  # when set, webhooks of other business accounts are ignored
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    path: str = DEFAULT_PATH
    max_attachment_bytes: int = MAX_ATTACHMENT_BYTES
    limits: ClientLimits = field(default_factory=ClientLimits)

    @property
    def secrets(self) -> tuple[str, ...]:
        return (self.access_token, self.app_secret, self.verify_token)

    @property
    def api_base(self) -> str:
        return f"{self.graph_url.rstrip('/')}/{self.api_version}"


def load(config: Mapping[str, Any], env: Mapping[str, str]) -> Settings:
    def pick(name: str, env_name: str | None, default: Any) -> Any:
        return platform_setting(config, env, name, env_name, default)

    token = env_secret(config, env, "WHATSAPP_CLOUD_ACCESS_TOKEN", "access_token", "token",
                       section=SECTION, required="Meta App Dashboard > WhatsApp > API Setup")
    app_secret = env_secret(config, env, "WHATSAPP_CLOUD_APP_SECRET", "app_secret",
                            section=SECTION, required="Meta App Dashboard > Settings > Basic > "
                            "App secret; it checks every webhook's X-Hub-Signature-256")
    verify = env_secret(config, env, "WHATSAPP_CLOUD_VERIFY_TOKEN", "verify_token",
                        section=SECTION, required="any long random string; give Meta the same "
                        "one as the webhook's Verify Token")
    phone = str(pick("phone_number_id", "WHATSAPP_CLOUD_PHONE_NUMBER_ID", "")).strip()
    if not phone.isdigit():
        raise SettingsError("set WHATSAPP_CLOUD_PHONE_NUMBER_ID (or platforms.whatsapp_cloud."
                            "phone_number_id) to the Phone Number ID from API Setup: digits, "
                            "not the phone number itself")
    numbers = number_settings(config, env, SECTION,
                              port=("WHATSAPP_CLOUD_WEBHOOK_PORT", DEFAULT_PORT),
                              max_attachment_bytes=(None, MAX_ATTACHMENT_BYTES))
    path = str(pick("path", "WHATSAPP_CLOUD_WEBHOOK_PATH", DEFAULT_PATH))
    try:
        limits = client_limits(config, SECTION)
    except ValueError as exc:
        raise SettingsError(str(exc)) from None
    return Settings(
        phone_number_id=phone, access_token=token, app_secret=app_secret, verify_token=verify,
        graph_url=str(pick("graph_url", "WHATSAPP_CLOUD_GRAPH_URL", GRAPH_URL)),
        api_version=str(pick("api_version", "WHATSAPP_CLOUD_API_VERSION", API_VERSION)),
        waba_id=str(pick("waba_id", "WHATSAPP_CLOUD_WABA_ID", "")),
        host=str(pick("host", "WHATSAPP_CLOUD_WEBHOOK_HOST", DEFAULT_HOST)),
        port=int(numbers["port"]), path=path if path.startswith("/") else f"/{path}",
        max_attachment_bytes=int(numbers["max_attachment_bytes"]), limits=limits)

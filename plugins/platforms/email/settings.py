"""The email platform's settings: ``platforms.email`` in config.yaml (or its ``extra``), then
the environment (the variables of Hermes Agent 0.19: ``EMAIL_ADDRESS``, ``EMAIL_IMAP_HOST``,
...), then the defaults. ``EMAIL_PASSWORD`` comes only from the environment or ``.env`` and is
never part of a repr, a log line or an error message."""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from hermes_agent.kits.platform_config import config_secret, platform_setting

SECURITY = ("ssl", "starttls", "none")
TRUE = ("1", "true", "yes", "on")
MAX_MESSAGE_LENGTH = 50_000  # one mail's body; longer replies go out as several mails
MAX_ATTACHMENT_BYTES = 10_000_000
MAX_MAIL_BYTES = 40_000_000


class SettingsError(ValueError):
    """The platform must not start; the message says what to set."""


@dataclass(frozen=True)
class Settings:
    address: str
    password: str = field(repr=False)
    imap_host: str
    smtp_host: str
    imap_port: int = 993
    smtp_port: int = 587
    imap_security: str = "ssl"
    smtp_security: str = "starttls"
    username: str = ""  # the login name, when it is not the address
    mailbox: str = "INBOX"
    poll_interval: float = 15.0  # seconds between checks without IDLE
    idle: bool = True  # use IMAP IDLE where the server offers it
    idle_timeout: float = 300.0  # re-issue IDLE this often (servers drop it after 30 min)
    tls_ca_file: str = ""  # a private CA's certificate, for a self-hosted server
    skip_attachments: bool = False
    max_attachment_bytes: int = MAX_ATTACHMENT_BYTES
    max_mail_bytes: int = MAX_MAIL_BYTES
    max_message_length: int = MAX_MESSAGE_LENGTH
    html: bool = True  # replies as multipart/alternative: plain text and HTML
    require_authenticated_sender: bool = True
    authserv_id: str = ""
    timeout: float = 30.0  # seconds for a connection or a command

    @property
    def login(self) -> str:
        return self.username or self.address

    @property
    def domain(self) -> str:
        return self.address.rpartition("@")[2] or "localhost"


def _is_loopback(host: str) -> bool:
    if host.lower() in ("localhost", "localhost.localdomain"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _number(value: Any, key: str, kind: type = int) -> Any:
    try:
        number = kind(value)
    except (TypeError, ValueError):
        raise SettingsError(f"platforms.email.{key} must be a number, not {value!r}") from None
    if number < 0 or number != number:  # negative or nan
        raise SettingsError(f"platforms.email.{key} must be a positive number, not {value!r}")
    return number


def _flag(value: Any) -> bool:
    return value if isinstance(value, bool) else str(value).strip().lower() in TRUE


def _security(value: Any, port: int, implicit_port: int, host: str, key: str) -> str:
    chosen = str(value or ("ssl" if port == implicit_port else "starttls")).strip().lower()
    if chosen not in SECURITY:
        raise SettingsError(f"platforms.email.{key} must be one of {', '.join(SECURITY)}, "
                            f"not {chosen!r}")
    if chosen == "none" and not _is_loopback(host):
        raise SettingsError(f"platforms.email.{key}: none would send the password in the "
                            f"clear to {host}; use ssl or starttls (none is for a server on "
                            "this machine only)")
    return chosen


def load(config: Mapping[str, Any], env: Mapping[str, str]) -> Settings:
    """The settings, or :class:`SettingsError` when the platform must refuse to start."""
    def pick(name: str, env_name: str | None, default: Any) -> Any:
        return platform_setting(config, env, name, env_name, default)

    if config_secret(config, "password", "imap_password", "smtp_password"):
        raise SettingsError("do not put the mail password in config.yaml; set EMAIL_PASSWORD "
                            "in the environment or $HERMES_HOME/.env instead")
    address = str(pick("address", "EMAIL_ADDRESS", "")).strip()
    imap_host = str(pick("imap_host", "EMAIL_IMAP_HOST", "")).strip()
    smtp_host = str(pick("smtp_host", "EMAIL_SMTP_HOST", "")).strip()
    password = env.get("EMAIL_PASSWORD", "")
    missing = [name for name, value in (("EMAIL_ADDRESS", address), ("EMAIL_PASSWORD",
               password.strip()), ("EMAIL_IMAP_HOST", imap_host), ("EMAIL_SMTP_HOST", smtp_host))
               if not value]
    if missing:
        raise SettingsError(f"email needs {', '.join(missing)}: set them in $HERMES_HOME/.env "
                            "(the address and the hosts may also be platforms.email.address, "
                            "imap_host and smtp_host in config.yaml; the password only in the "
                            "environment)")
    if "@" not in address:
        raise SettingsError(f"EMAIL_ADDRESS must be a mail address, not {address!r}")
    imap_port = _number(pick("imap_port", "EMAIL_IMAP_PORT", 993), "imap_port")
    smtp_port = _number(pick("smtp_port", "EMAIL_SMTP_PORT", 587), "smtp_port")
    allow_all = any(_flag(v) for v in (config.get("allow_all_users", ""),
                                       env.get("EMAIL_ALLOW_ALL_USERS", ""),
                                       env.get("GATEWAY_ALLOW_ALL_USERS", "")))
    require_auth = pick("require_authenticated_sender", None, None)
    if require_auth is None:
        require_auth = not _flag(env.get("EMAIL_TRUST_FROM_HEADER", ""))
    return Settings(
        address=address, password=password, imap_host=imap_host, smtp_host=smtp_host,
        imap_port=imap_port, smtp_port=smtp_port,
        imap_security=_security(pick("imap_security", "EMAIL_IMAP_SECURITY", ""), imap_port,
                                993, imap_host, "imap_security"),
        smtp_security=_security(pick("smtp_security", "EMAIL_SMTP_SECURITY", ""), smtp_port,
                                465, smtp_host, "smtp_security"),
        username=str(pick("username", "EMAIL_USERNAME", "")).strip(),
        mailbox=str(pick("mailbox", "EMAIL_MAILBOX", "INBOX")),
        poll_interval=max(0.5, _number(pick("poll_interval", "EMAIL_POLL_INTERVAL", 15),
                                       "poll_interval", float)),
        idle=_flag(pick("idle", "EMAIL_IMAP_IDLE", True)),
        idle_timeout=max(1.0, min(1740.0, _number(pick("idle_timeout", None, 300),
                                                  "idle_timeout", float))),
        tls_ca_file=str(pick("tls_ca_file", "EMAIL_TLS_CA_FILE", "")),
        skip_attachments=_flag(pick("skip_attachments", None, False)),
        max_attachment_bytes=_number(pick("max_attachment_bytes", None, MAX_ATTACHMENT_BYTES),
                                     "max_attachment_bytes"),
        max_mail_bytes=_number(pick("max_mail_bytes", None, MAX_MAIL_BYTES), "max_mail_bytes"),
        max_message_length=_number(pick("max_message_length", None, MAX_MESSAGE_LENGTH),
                                   "max_message_length"),
        html=_flag(pick("html", None, True)),
        # with anyone allowed, who sent a mail grants nothing: no need to prove it
        require_authenticated_sender=_flag(require_auth) and not allow_all,
        authserv_id=str(pick("authserv_id", "EMAIL_AUTHSERV_ID", "")).strip().lower(),
        timeout=max(1.0, _number(pick("timeout", None, 30), "timeout", float)))

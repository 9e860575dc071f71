"""Owner: the builtin plugin `gateway`. Reading a platform's settings: its config.yaml
section, its ``extra`` (where Hermes Agent 0.19 kept plugin settings) and the environment;
the ids a setting lists; the URL a platform serving HTTP listens at. Helpers platform plugins
may use; not part of the contract docs/api.md locks (docs/kits.md)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def platform_setting(config: Mapping[str, Any], env: Mapping[str, str], name: str,
                     env_name: str | None = None, default: Any = None) -> Any:
    """A platform setting: ``platforms.<name>.<name>`` in config.yaml, else its ``extra``
    (where 0.19 kept plugin settings), else the environment variable ``env_name``, else
    ``default``; empty values count as unset."""
    extra = config.get("extra") if isinstance(config.get("extra"), Mapping) else {}
    values = (config.get(name), extra.get(name), env.get(env_name) if env_name else None)
    return next((value for value in values if value not in (None, "")), default)


def config_secret(config: Mapping[str, Any], *names: str) -> str | None:
    """The first of ``names`` set in the platform's config.yaml section (or its ``extra``):
    a secret there is refused, since secrets belong in the environment or ``.env``."""
    extra = config.get("extra") if isinstance(config.get("extra"), Mapping) else {}
    return next((name for name in names if config.get(name) or extra.get(name)), None)


def http_url(host: str, port: int, path: str = "") -> str:
    """``http://host:port/path``, an IPv6 host in brackets."""
    return f"http://{f'[{host}]' if ':' in host else host}:{port}{path}"


def id_set(value: Any) -> frozenset[str]:
    """Ids from a YAML list or a comma-separated string (``allowed_chats: 1,2``)."""
    if value in (None, ""):
        return frozenset()
    items = value if isinstance(value, (list, tuple, set, frozenset)) else str(value).split(",")
    return frozenset(str(item).strip() for item in items if str(item).strip())


class PlatformSettingsError(ValueError):
    """A platform must not start; the message says what to set."""


def env_secret(config: Mapping[str, Any], env: Mapping[str, str], env_name: str,
               *config_keys: str, section: str, required: str = "") -> str:
    """A secret from the environment (or ``.env``) only: one written in the platform's
    config.yaml section under any of ``config_keys`` is refused. ``required``: how to get it,
    when the platform cannot start without it (empty: optional)."""
    written = config_secret(config, *config_keys)
    if written:
        raise PlatformSettingsError(f"do not put the {written} in config.yaml ({section}); set "
                                    f"{env_name} in the environment or $HERMES_HOME/.env instead")
    value = str(env.get(env_name, "")).strip()
    if not value and required:
        raise PlatformSettingsError(f"{env_name} is not set: put it in the environment or "
                                    f"$HERMES_HOME/.env ({required})")
    return value


def number_settings(config: Mapping[str, Any], env: Mapping[str, str], section: str,
                    **defaults: tuple[str | None, float]) -> dict[str, float]:
    """``name=(env_name, default)`` -> the numbers set (``PlatformSettingsError`` naming the
    key when one is not a number)."""
    values: dict[str, float] = {}
    for name, (env_name, default) in defaults.items():
        value = platform_setting(config, env, name, env_name, default)
        try:
            values[name] = float(value)
        except (TypeError, ValueError):
            raise PlatformSettingsError(f"{section}.{name} must be a number, not {value!r}"
                                        ) from None
    return values


def flag(value: Any) -> bool:
    """A yes/no setting from YAML (a bool) or the environment (``true``, ``1``, ``yes``)."""
    return value if isinstance(value, bool) else str(value).strip().lower() in (
        "1", "true", "yes", "on")

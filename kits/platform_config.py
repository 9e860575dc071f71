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

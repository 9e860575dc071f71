"""The provider's settings: secrets and identities from the environment (or
``$HERMES_HOME/.env``), the rest from ``plugins.entries.mem0`` in config.yaml.

A setting with a wrong value is reported once and its default is used: a typo in config.yaml
never takes memory down.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from hermes_agent.kits.files import set_env_values
from hermes_agent import write_config_value

from .errors import DEFAULT_HOST, KEY_URL

log = logging.getLogger("hermes_agent.plugins.mem0")
PLUGIN = "mem0"
DEFAULT_USER = "hermes-user"
DEFAULT_AGENT = "hermes"
# setting -> environment variable that overrides it
ENV = {"host": "MEM0_HOST", "user_id": "MEM0_USER_ID", "agent_id": "MEM0_AGENT_ID"}
SECRET_ENV = "MEM0_API_KEY"


@dataclass(frozen=True)
class Mem0Settings:
    api_key: str = ""
    host: str = ""  # empty: the hosted platform
    user_id: str = ""  # empty: the user id the session passes, else DEFAULT_USER
    agent_id: str = DEFAULT_AGENT
    top_k: int = 5  # memories recalled per turn
    timeout: float = 10.0  # read timeout of one request (s)
    connect_timeout: float = 3.0
    prefetch_timeout: float = 2.5  # budget of the per-turn recall, retries included (s)
    max_retries: int = 2
    retry_after_cap: float = 30.0
    failure_threshold: int = 5  # failed calls in a row that pause Mem0 ...
    cooldown: float = 60.0  # ... for this long (s)
    sync_turns: bool = True  # store every finished turn
    mirror_builtin_memory: bool = True  # store what the builtin memory tool saves

    @property
    def base_url(self) -> str:
        return (self.host or DEFAULT_HOST).rstrip("/")

    @classmethod
    def load(cls, config: Mapping[str, Any] | None, env: Mapping[str, str]) -> Mem0Settings:
        values: dict[str, Any] = {}
        config = config if isinstance(config, Mapping) else {}
        for spec in fields(cls):
            if spec.name == "api_key":
                continue
            raw = env.get(ENV[spec.name], "").strip() if spec.name in ENV else ""
            raw = raw or config.get(spec.name)
            if raw is None or raw == "":
                continue
            try:
                values[spec.name] = _coerce(raw, type(spec.default))
            except ValueError:
                log.warning("mem0: plugins.entries.mem0.%s = %r is not a %s; using %r",
                            spec.name, raw, type(spec.default).__name__, spec.default)
        return cls(api_key=env.get(SECRET_ENV, "").strip(), **values)


def _coerce(value: Any, kind: type) -> Any:
    if kind is bool:
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in ("1", "true", "yes", "on"):
            return True
        if text in ("0", "false", "no", "off"):
            return False
        raise ValueError(value)
    if kind in (int, float):
        if isinstance(value, bool):
            raise ValueError(value)
        number = kind(value)
        if number < 0:
            raise ValueError(value)
        return number
    return str(value).strip()


def config_schema() -> list[dict[str, Any]]:
    """What ``hermes memory setup`` asks for (the original's field names)."""
    defaults = Mem0Settings()
    schema: list[dict[str, Any]] = [
        {"key": "api_key", "env_var": SECRET_ENV, "secret": True, "required": True,
         "description": "Mem0 API key (not needed by a self-hosted server without auth)",
         "url": KEY_URL},
        {"key": "host", "env_var": "MEM0_HOST", "default": DEFAULT_HOST,
         "description": "Mem0 server URL (a self-hosted server)"},
        {"key": "user_id", "env_var": "MEM0_USER_ID", "default": "",
         "description": "whose memories these are (empty: the chat's user, else "
                        f"{DEFAULT_USER})"},
        {"key": "agent_id", "env_var": "MEM0_AGENT_ID", "default": DEFAULT_AGENT,
         "description": "the agent's id in Mem0"},
    ]
    described = {"top_k": "memories recalled per turn",
                 "timeout": "seconds one request may take",
                 "prefetch_timeout": "seconds the per-turn recall may take",
                 "sync_turns": "store every finished turn",
                 "mirror_builtin_memory": "store what the builtin memory tool saves"}
    schema += [{"key": key, "default": getattr(defaults, key), "description": text}
               for key, text in described.items()]
    return schema


def save(values: Mapping[str, Any], hermes_home: str | Path) -> None:
    """Write settings: the API key to ``$HERMES_HOME/.env``, the rest to
    ``plugins.entries.mem0`` in config.yaml (comments and order kept). Keys may be the
    setting names or their environment variable names; an empty value removes a setting."""
    home = Path(hermes_home)
    by_env = {env: key for key, env in ENV.items()} | {SECRET_ENV: "api_key"}
    known = {spec.name: type(spec.default) for spec in fields(Mem0Settings)}
    secrets: dict[str, str] = {}
    for raw_key, value in values.items():
        key = by_env.get(raw_key, raw_key)
        if key not in known:
            raise ValueError(f"mem0 has no setting {raw_key!r}; settings: "
                             f"{', '.join(sorted(known))}")
        if key == "api_key":
            if value:
                secrets[SECRET_ENV] = str(value).strip()
            continue
        dotted = f"plugins.entries.{PLUGIN}.{key}"
        if value is None or value == "":
            write_config_value(home, dotted, None, unset=True)
        else:
            write_config_value(home, dotted, _coerce(value, known[key]))
    if secrets:
        set_env_values(home / ".env", secrets)

"""The provider's settings: ``plugins.entries.local`` in config.yaml.

```yaml
plugins:
  entries:
    local:
      top_k: 5              # facts recalled into each turn
      half_life_days: 30    # recency halves every this many days
      max_facts: 10000      # beyond this, the least recently used facts are deleted
```

A missing or invalid value falls back to its default (with a warning in the log).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hermes_agent import write_config_value

log = logging.getLogger("hermes_agent.memory.local")
ENTRY = "plugins.entries.local"

#: key -> (type, default, lowest allowed, description)
FIELDS: dict[str, tuple[type, float, float, str]] = {
    "top_k": (int, 5, 1, "How many facts are recalled into each turn"),
    "half_life_days": (float, 30.0, 0.01, "Days after which a fact's recency score halves"),
    "max_facts": (int, 10_000, 1, "Facts kept; beyond this the least recently used go"),
}


@dataclass(frozen=True)
class Settings:
    top_k: int = 5
    half_life_days: float = 30.0
    max_facts: int = 10_000


def coerce(key: str, value: Any) -> int | float:
    """``value`` as the type of setting ``key``; ValueError when it is not one."""
    kind, _, lowest, _ = FIELDS[key]
    if isinstance(value, bool):
        raise ValueError(f"{key} must be a number, not {value!r}")
    number = kind(value)
    if kind is int and float(value) != number:
        raise ValueError(f"{key} must be a whole number, not {value!r}")
    if number < lowest:
        raise ValueError(f"{key} must be at least {lowest}, not {value!r}")
    return number


def from_mapping(values: Mapping[str, Any] | None) -> Settings:
    chosen: dict[str, Any] = {}
    for key in FIELDS:
        if values and values.get(key) is not None:
            try:
                chosen[key] = coerce(key, values[key])
            except (TypeError, ValueError) as exc:
                log.warning("local memory: %s; using the default %s", exc, FIELDS[key][1])
    return Settings(**chosen)


def schema() -> list[dict[str, Any]]:
    """The settings for a setup command: key, description, default and type."""
    return [{"key": key, "description": description, "default": default,
             "type": kind.__name__} for key, (kind, default, _, description) in FIELDS.items()]


def save(values: Mapping[str, Any], hermes_home: str | Path) -> list[str]:
    """Write the known keys of ``values`` to ``plugins.entries.local`` in config.yaml (other
    keys, comments and order kept); returns the dotted keys written. An invalid value
    raises ValueError before anything is written."""
    clean = {key: coerce(key, value) for key, value in values.items()
             if key in FIELDS and value is not None}
    written = []
    for key, value in clean.items():
        write_config_value(Path(hermes_home), f"{ENTRY}.{key}", value)
        written.append(f"{ENTRY}.{key}")
    return written

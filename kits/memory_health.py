"""Owner: the builtin plugin `memory`.

How the external memory provider has been doing: what the agent's memory manager records
and ``hermes memory status`` shows (last prefetch, failures, timeouts, the last error).

Kept in ``$HERMES_HOME/memories/provider-health.json``, one record per provider name, written
by the process that ran the provider (after each turn, in the background, and at exit).
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["ProviderHealth", "health_path", "load_health", "save_health"]


@dataclass
class ProviderHealth:
    """Counters and the latest events of one memory provider."""

    provider: str
    calls: int = 0
    failures: int = 0  # calls that raised
    timeouts: int = 0  # calls left behind at their timeout
    last_error: str = ""  # "method: ExceptionType: message" (or "method: timed out after N s")
    last_error_at: float = 0.0
    last_prefetch_ms: float = -1.0  # -1: no prefetch yet
    last_prefetch_chars: int = 0
    last_prefetch_at: float = 0.0
    last_sync_at: float = 0.0  # the last sync_turn that returned
    updated_at: float = field(default_factory=time.time)

    def failed(self, method: str, reason: str, *, timeout: bool = False) -> None:
        self.failures += not timeout
        self.timeouts += timeout
        self.last_error, self.last_error_at = f"{method}: {reason}", time.time()


def health_path(home: Path) -> Path:
    return Path(home) / "memories" / "provider-health.json"


def load_health(home: Path) -> dict[str, ProviderHealth]:
    """The recorded health by provider name (empty when nothing was recorded or the file is
    unreadable: it is a diagnostic, never a reason to fail)."""
    try:
        data = json.loads(health_path(home).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    known = set(ProviderHealth.__dataclass_fields__)
    records = {}
    for name, row in (data.items() if isinstance(data, dict) else ()):
        if isinstance(row, dict):
            try:
                records[name] = ProviderHealth(**{k: v for k, v in row.items() if k in known})
            except TypeError:
                continue
    return records


def save_health(home: Path, records: dict[str, ProviderHealth]) -> None:
    """Merge ``records`` into the file (other providers' records are kept)."""
    from hermes_agent import private_dir, write_atomic

    merged: dict[str, Any] = {name: asdict(r) for name, r in load_health(home).items()}
    for name, record in records.items():
        record.updated_at = time.time()
        merged[name] = asdict(record)
    path = health_path(home)
    private_dir(path.parent)
    write_atomic(path, json.dumps(merged, indent=1, sort_keys=True) + "\n", mode=0o600)

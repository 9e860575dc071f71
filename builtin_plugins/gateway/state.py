"""``$HERMES_HOME/gateway/state.json``: what the running gateway tells ``hermes gateway
status`` (pid, platforms, chats, queue depth), rewritten atomically as it changes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hermes_agent import private_dir, write_atomic
from hermes_agent.kits.files import pid_alive


class StateFile:
    def __init__(self, home: Path):
        self.path = private_dir(Path(home) / "gateway") / "state.json"

    def write(self, state: dict[str, Any]) -> None:
        write_atomic(self.path, json.dumps({**state, "updated_at": _now()}, indent=1))

    def remove(self) -> None:
        self.path.unlink(missing_ok=True)

    def read(self) -> dict[str, Any] | None:
        """The state of a gateway that is still running, else None."""
        try:
            state = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return state if isinstance(state, dict) and pid_alive(state.get("pid")) else None


def _now() -> float:
    import time

    return time.time()

"""What the Matrix platform keeps between starts, in
``$HERMES_HOME/gateway/matrix/<account>.json``: the sync token (the point up to which every
message was handed to the gateway) with the last event ids handed over, the device id a password login created (reused, so
restarts do not pile up devices) and the rooms joined as direct messages. No secret is kept."""

from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path
from typing import Any

from hermes_agent import private_dir, write_atomic

log = logging.getLogger("hermes_agent.gateway.matrix")


class SyncState:
    def __init__(self, home: Path, homeserver: str, user_id: str):
        self.folder = home / "gateway" / "matrix"
        self.homeserver = homeserver
        self.user_id = user_id  # known from MATRIX_USER_ID, or once logged in
        self.device_id: str | None = None

    @property
    def path(self) -> Path:
        account = hashlib.sha256(f"{self.homeserver}\n{self.user_id}".encode()).hexdigest()[:16]
        return self.folder / f"{account}.json"

    def load(self) -> dict[str, Any]:
        """The saved state of the configured account ({} when none, or unreadable)."""
        if not self.user_id:  # a token alone: whoami names the account, then load again
            return {}
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            log.warning("matrix: ignoring %s (%s): the history before now is not answered",
                        self.path, exc)
            return {}
        return data if isinstance(data, dict) else {}

    def save(self, since: str | None, direct_rooms: list[str], recent: list[str]) -> None:
        """``recent``: the last event ids handed to the gateway, some maybe after ``since``
        (saved after each one, so a kill before the next token does not hand it over twice)."""
        private_dir(self.folder)
        write_atomic(self.path, json.dumps({
            "homeserver": self.homeserver, "user_id": self.user_id, "device_id": self.device_id,
            "since": since, "direct_rooms": direct_rooms, "recent": recent}), durable=True)

"""Which agent session each chat continues: ``$HERMES_HOME/gateway/sessions.json`` maps a
session key (platform, chat, thread) to a session id, rewritten atomically on each change."""

from __future__ import annotations

import json
import logging
import threading
from pathlib import Path

from hermes_agent import private_dir, write_atomic
from hermes_agent.api import InboundMessage

log = logging.getLogger("hermes_agent.gateway")


def session_key(message: InboundMessage) -> str:
    """``platform:chat`` or ``platform:chat:thread``."""
    key = f"{message.platform}:{message.chat_id}"
    return f"{key}:{message.thread_id}" if message.thread_id else key


class ChatMap:
    def __init__(self, home: Path):
        self.path = private_dir(Path(home) / "gateway") / "sessions.json"
        self._lock = threading.Lock()
        self._map: dict[str, str] = self._load()

    def _load(self) -> dict[str, str]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            log.warning("%s is unreadable (%s); chats start fresh sessions. Delete the file "
                        "to silence this warning.", self.path, exc)
            return {}
        return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}

    def get(self, key: str) -> str | None:
        with self._lock:
            return self._map.get(key)

    def set(self, key: str, session_id: str) -> None:
        with self._lock:
            if self._map.get(key) == session_id:
                return
            self._map[key] = session_id
            write_atomic(self.path, json.dumps(self._map, indent=1, sort_keys=True),
                         durable=True)

    def discard(self, key: str) -> None:
        with self._lock:
            if self._map.pop(key, None) is not None:
                write_atomic(self.path, json.dumps(self._map, indent=1, sort_keys=True),
                             durable=True)

    def __len__(self) -> int:
        return len(self._map)

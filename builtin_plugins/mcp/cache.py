"""Each server's last tool listing, kept so a turn can offer its tools without starting it.

``$HERMES_HOME/plugin-data/mcp/tools-cache.json`` holds, per server, the tools it listed (name,
description, input schema) and whether it had prompts and resources, under a key hashed from
what decides that listing (command, args, env, cwd, url, headers, transport): a changed entry
in config.yaml misses the cache, and the server is started before the turn as without one.
The listing is written again each time the server starts (its first call, `hermes mcp test`).
The file is sealed (``seal_json``): the descriptions reach the model, so one changed outside
hermes is not offered, and the server is started before the turn as without a cache.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from hermes_agent import seal_json, unseal_json, write_atomic

from .connection import attr
from .results import short_descriptions
from .settings import ServerSettings

log = logging.getLogger("hermes_agent.mcp")
KEY_FIELDS = ("command", "args", "env", "cwd", "url", "headers", "transport")
PURPOSE = "mcp-tools"  # what its seal says the file is (hermes_agent.seal_json)


def settings_key(settings: ServerSettings) -> str:
    """A hash of the settings that decide what the server lists (secrets are not stored)."""
    fields = {name: getattr(settings, name) for name in KEY_FIELDS}
    text = json.dumps(fields, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def listing(tools: list[Any], has: set[str], limit: int = 4096) -> dict[str, Any]:
    """What is stored of a listing; descriptions longer than ``limit`` (four times the
    server's ``max_description_chars``) are cut there, so the file stays small."""
    return {"tools": [{"name": t.name, "description": (t.description or "")[:limit],
                       "input_schema": short_descriptions(
                           attr(t, "input_schema", "inputSchema") or {}, limit)}
                      for t in tools], "has": sorted(has)}


class ToolCache:
    def __init__(self, path: Path):
        self.path = path

    def _read(self) -> dict[str, Any]:
        try:
            text = self.path.read_text(encoding="utf-8")
        except (OSError, ValueError):
            return {}
        return unseal_json(PURPOSE, text, self.path) or {}

    def get(self, settings: ServerSettings) -> tuple[list[Any], set[str]] | None:
        """The cached tools (objects like the SDK's) and prompts/resources, or None."""
        entry = self._read().get(settings.name)
        if not isinstance(entry, dict) or entry.get("key") != settings_key(settings):
            return None
        try:
            tools = [SimpleNamespace(name=str(t["name"]), description=str(t["description"]),
                                     input_schema=dict(t["input_schema"]))
                     for t in entry["tools"]]
            return tools, {str(h) for h in entry["has"]}
        except (KeyError, TypeError, ValueError):
            return None

    def put(self, settings: ServerSettings, tools: list[Any], has: set[str]) -> bool:
        """Store the listing; True when it differs from the one stored."""
        data = self._read()
        old = data.get(settings.name)
        entry = {"key": settings_key(settings),
                 **listing(tools, has, 4 * settings.limits.max_description_chars)}
        if isinstance(old, dict) and {k: v for k, v in old.items() if k != "at"} == entry:
            return False
        data[settings.name] = {**entry, "at": time.time()}
        text = seal_json(PURPOSE, data)
        if text is None:  # no cache key: nothing stored that a later run could not check
            return True
        try:
            write_atomic(self.path, text)
        except OSError as exc:
            log.debug("MCP: could not save the tool cache: %s", exc)
        return True

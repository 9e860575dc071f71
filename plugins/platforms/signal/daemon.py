"""signal-cli's HTTP daemon (``signal-cli -a ACCOUNT daemon --http HOST:PORT``): JSON-RPC
calls on ``POST /api/v1/rpc`` and incoming messages as server-sent events on
``GET /api/v1/events``. Each event has an id; signal-cli keeps the last 1000, and a client
reconnecting with ``Last-Event-ID`` first gets the ones after it, so a gateway that saved the
id of the last message it took misses nothing signal-cli still holds."""

from __future__ import annotations

import itertools
import json
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from hermes_agent.kits.chat_api import ChatAPI, ChatAPIError

log = logging.getLogger("hermes_agent.gateway.signal")


@dataclass
class Event:
    id: str | None
    name: str
    data: str


class SignalDaemon:
    def __init__(self, http_url: str, account: str):
        self.account = account
        self.api = ChatAPI(http_url, service="signal-cli", timeout=60.0)
        self._ids = itertools.count(1)

    async def call(self, method: str, **params: Any) -> Any:
        """A JSON-RPC call's ``result``; :class:`ChatAPIError` for a JSON-RPC error (not
        retryable: signal-cli answered) or an HTTP failure."""
        request = {"jsonrpc": "2.0", "id": next(self._ids), "method": method,
                   "params": {"account": self.account,
                              **{k: v for k, v in params.items() if v is not None}}}
        answer = await self.api.call("POST", "/api/v1/rpc", json=request)
        if isinstance(answer, dict) and isinstance(answer.get("error"), dict):
            error = answer["error"]
            raise ChatAPIError(f"signal-cli {method} failed: {error.get('message')} "
                               f"(code {error.get('code')})", data=error)
        return answer.get("result") if isinstance(answer, dict) else None

    async def events(self, last_event_id: str | None) -> AsyncIterator[Event]:
        """The event stream, from after ``last_event_id``; ends when the connection does."""
        headers = {"Accept": "text/event-stream"}
        if last_event_id:
            headers["Last-Event-ID"] = last_event_id
        async with self.api.stream("GET", "/api/v1/events", headers=headers,
                                   timeout=None) as response:
            if response.status_code != 200:
                await response.aread()
                raise ConnectionError(f"GET /api/v1/events answered HTTP {response.status_code}"
                                      " (is this signal-cli's --http daemon?)")
            event_id, name, data = None, "message", []
            async for line in response.aiter_lines():
                if not line:
                    if data:
                        yield Event(event_id, name, "\n".join(data))
                    event_id, name, data = None, "message", []
                    continue
                field, _, value = line.partition(":")
                value = value[1:] if value.startswith(" ") else value
                if field == "id":
                    event_id = value
                elif field == "event":
                    name = value
                elif field == "data":
                    data.append(value)

    async def close(self) -> None:
        await self.api.close()


def envelope(event: Event) -> tuple[dict[str, Any], str] | None:
    """An event's envelope and the account it is for, or None (not a received message)."""
    if event.name not in ("receive", "message"):
        return None
    try:
        data = json.loads(event.data)
    except ValueError:
        log.warning("signal: an event that is not JSON was skipped")
        return None
    if isinstance(data, dict) and isinstance(data.get("params"), dict):  # a JSON-RPC wrapper
        data = data["params"].get("result") or data["params"]
    if not isinstance(data, dict) or not isinstance(data.get("envelope"), dict):
        return None
    return data["envelope"], str(data.get("account") or "")

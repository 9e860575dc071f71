"""Where a run's output goes, per the job's ``deliver`` (targets separated by commas):

- ``local``: nowhere else than its output file (always written);
- ``file:PATH``: appended to PATH (created 0600 when new);
- ``PLATFORM:CHAT_ID``: sent to that chat by the platform's live adapter, which exists only
  where a gateway runs in the same process (``hermes gateway`` runs the scheduler); elsewhere
  the delivery is recorded as failed with the reason;
- ``origin``: the chat the job was created from, when it recorded one, else ``local``.
"""

from __future__ import annotations

import asyncio
import logging
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

log = logging.getLogger("hermes_agent.cron")
SEND_TIMEOUT = 60.0


@dataclass
class Delivery:
    target: str
    ok: bool
    error: str | None = None


class Deliverer:
    """``adapters(name)`` finds a live platform adapter (``ctx.get_platform_adapter``);
    ``loop`` is the event loop those adapters run on (the gateway's), when there is one."""

    def __init__(self, adapters: Any, loop: asyncio.AbstractEventLoop | None = None):
        self.adapters = adapters
        self.loop = loop

    def deliver(self, job: dict[str, Any], text: str) -> list[Delivery]:
        results = []
        for target in str(job.get("deliver") or "local").split(","):
            target = self._resolve(target.strip(), job)
            try:
                results.append(self._one(target, text))
            except Exception as exc:  # a broken adapter or disk must not lose the run record
                log.warning("cron: delivery of job %s to %s failed: %s", job.get("id"), target,
                            exc)
                results.append(Delivery(target, False, f"{type(exc).__name__}: {exc}"))
        return results

    @staticmethod
    def _resolve(target: str, job: dict[str, Any]) -> str:
        if target != "origin":
            return target
        origin = job.get("origin") or {}
        if origin.get("platform") and origin.get("chat_id"):
            return f"{origin['platform']}:{origin['chat_id']}"
        return "local"

    def _one(self, target: str, text: str) -> Delivery:
        if target in ("local", ""):
            return Delivery("local", True)
        if target.startswith("file:"):
            path = Path(target[5:])
            path.parent.mkdir(parents=True, exist_ok=True)
            # a link put there after the job was made (report.md -> ~/.bashrc) is not followed
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND
                         | getattr(os, "O_NOFOLLOW", 0), 0o600)
            with os.fdopen(fd, "a", encoding="utf-8") as handle:
                handle.write(text if text.endswith("\n") else text + "\n")
            return Delivery(target, True)
        platform, _, chat_id = target.partition(":")
        adapter = self.adapters(platform)
        if adapter is None:
            return Delivery(target, False, (
                f"platform {platform!r} is not connected in this process: platform targets are "
                "delivered by the scheduler running inside `hermes gateway` with that platform "
                "enabled (the output is kept in the job's output file)"))
        result = self._send(adapter, chat_id, text)
        if getattr(result, "success", False):
            return Delivery(target, True)
        return Delivery(target, False, str(getattr(result, "error", None)
                                           or "the adapter reported a failed send"))

    def _send(self, adapter: Any, chat_id: str, text: str) -> Any:
        limit = int(getattr(adapter, "max_message_length", 0) or 0)
        pieces = [text]
        if limit:
            from hermes_agent.kits.chat_text import split_message

            pieces = split_message(text, limit)
        result = None
        for piece in pieces:
            result = self._await(adapter.send(chat_id, piece))
            if not getattr(result, "success", False):
                break
        return result

    def _await(self, coro: Any) -> Any:
        loop = self.loop
        if loop is not None and loop.is_running():
            try:
                running = asyncio.get_running_loop()
            except RuntimeError:
                running = None
            if running is not loop:
                return asyncio.run_coroutine_threadsafe(coro, loop).result(SEND_TIMEOUT)
        return asyncio.run(asyncio.wait_for(coro, SEND_TIMEOUT))


def as_records(deliveries: list[Delivery]) -> list[dict[str, Any]]:
    return [asdict(d) for d in deliveries]

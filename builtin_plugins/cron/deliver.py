"""Where a run's output goes, per the job's ``deliver`` (targets separated by commas):

- ``local``: nowhere else than its output file (always written);
- ``file:PATH``: appended to PATH (created 0600 when new);
- ``PLATFORM``, ``PLATFORM:CHAT_ID`` or a configured channel name: sent through the
  ``delivery`` service (the gateway plugin's, as ``send_message`` and ``hermes send`` are):
  the running gateway's adapter, in this process or over its control socket, after the target
  is checked against the platform's allow-lists; else recorded as failed with the reason;
- ``origin``: the chat the job was created from, when it recorded one, else ``local``.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

log = logging.getLogger("hermes_agent.cron")


@dataclass
class Delivery:
    target: str
    ok: bool
    error: str | None = None


class Deliverer:
    """``send(target, text)`` delivers to a platform target and returns the ``delivery``
    service's result (``{"success": ..., "error": ...}``); None: no platform delivery here."""

    def __init__(self, send: Callable[[str, str], dict[str, Any]] | None = None):
        self.send = send

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
            chat = f"{origin['platform']}:{origin['chat_id']}"
            return f"{chat}:{origin['thread_id']}" if origin.get("thread_id") else chat
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
        if self.send is None:
            return Delivery(target, False, (
                "no delivery service here (the gateway plugin is off): platform targets are "
                "sent through `hermes gateway` (the output is kept in the job's output file)"))
        result = self.send(target, text)
        if result.get("success"):
            return Delivery(target, True)
        return Delivery(target, False, str(result.get("error") or "not delivered")
                        + " (the output is kept in the job's output file)")


def as_records(deliveries: list[Delivery]) -> list[dict[str, Any]]:
    return [asdict(d) for d in deliveries]

"""The ``delivery`` service: one path for every message hermes sends on its own (the
``send_message`` tool, ``hermes send``, cron's platform targets). The target is resolved and
checked against the allow-lists (:mod:`.targets`) where the platform's adapter runs, then sent
through it as a reply is (formatted, split at the platform's limit, retried when the platform
says so). In the gateway's process that is its live adapter; in any other process (a chat in a
terminal, ``hermes cron daemon``) the request goes to the running gateway over its control
socket (:mod:`.control`), which checks it again itself."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from hermes_agent.api import GATEWAY

from .chatmap import ChatMap
from .control import request
from .targets import Directory, TargetError

if TYPE_CHECKING:
    from hermes_agent import Kernel

log = logging.getLogger("hermes_agent.gateway")
NO_GATEWAY = ("no gateway is running for this home ({home}): messages to chats go out through "
              "`hermes gateway run` with the platform enabled; start it and try again")


class DeliveryService:
    def __init__(self, kernel: Kernel):
        self.kernel = kernel

    # --- the contract (api.MessageDelivery) --------------------------------------------------
    def send(self, target: str, text: str, *, timeout: float = 60.0) -> dict[str, Any]:
        """Deliver ``text`` to ``target``; call from any thread but the gateway's loop (the
        loop itself awaits :meth:`send_here`)."""
        if not str(text or "").strip():
            return _failed(target, "the message is empty")
        runner = self._runner()
        if runner is not None:
            if _on_loop(runner):
                return _failed(target, "send() was called on the gateway's loop; await "
                                       "send_here() there")
            future = asyncio.run_coroutine_threadsafe(self.send_here(runner, target, text),
                                                      runner.loop)
            try:
                return future.result(timeout)
            except TimeoutError:
                future.cancel()
                return _failed(target, f"the platform did not answer within {timeout:.0f} s")
        answer = request(self.kernel.home, {"op": "send", "target": target, "text": text},
                         timeout)
        return answer if answer is not None else _failed(
            target, NO_GATEWAY.format(home=self.kernel.home))

    def targets(self, platform: str | None = None) -> list[dict[str, Any]]:
        """Home channels and configured channels (each with ``connected``: whether a running
        gateway has its platform)."""
        runner = self._runner()
        if runner is not None:
            connected = set(runner.live)
        else:
            answer = request(self.kernel.home, {"op": "platforms"}, 10.0)
            connected = set(answer.get("platforms", [])) if answer else set()
        rows = self.directory(runner).listing(platform)
        return [{**row, "connected": row["platform"] in connected} for row in rows]

    # --- where the adapters are --------------------------------------------------------------
    async def send_here(self, runner: Any, target: str, text: str) -> dict[str, Any]:
        """Resolve, check and send through this process's running gateway (on its loop)."""
        directory = self.directory(runner)
        try:
            resolved = await runner.in_thread(_resolve, directory, target)
        except TargetError as exc:
            return _failed(target, str(exc))
        result = await runner.deliver(resolved.platform, resolved.chat_id, text,
                                      resolved.thread_id)
        where = {"target": resolved.key, "platform": resolved.platform,
                 "chat_id": resolved.chat_id, "thread_id": resolved.thread_id}
        if result.get("success"):
            log.info("gateway: delivered a message to %s", resolved.key)
        else:
            log.warning("gateway: delivery to %s failed: %s", resolved.key, result.get("error"))
        return {**where, **result}

    def directory(self, runner: Any = None) -> Directory:
        """The targets as this process sees them: with a runner, its chats and chat map;
        else the chat map on disk (``gateway/sessions.json``)."""
        kernel = self.kernel
        platforms = set(kernel.slots.providers["platform"])
        if runner is not None:
            platforms |= set(runner.adapters)
            chats, chatmap, entries = runner.chats, runner.chatmap, runner.entries
        else:
            chats, chatmap = {}, ChatMap(kernel.home)
            entries = {name: p.obj for name, p in kernel.slots.providers["platform"].items()}
        return Directory(kernel.config, kernel.env, sorted(platforms),
                         known_chat=lambda key: key in chats or chatmap.get(key) is not None,
                         entries=entries)

    def _runner(self) -> Any:
        runner = self.kernel.service(GATEWAY).runner
        if runner is None or runner.loop is None or runner.closed or not runner.loop.is_running():
            return None
        return runner


async def control_answer(runner: Any, req: Any) -> dict[str, Any]:
    """A control socket request (:mod:`.control`), answered by this process's gateway."""
    if not isinstance(req, dict):
        return {"success": False, "error": "bad request: not a JSON object"}
    if req.get("op") == "platforms":
        return {"platforms": sorted(runner.live)}
    if req.get("op") == "send":
        target, text = req.get("target"), req.get("text")
        if not isinstance(target, str) or not isinstance(text, str) or not text.strip():
            return {"success": False, "error": "bad request: send needs target and text"}
        return await DeliveryService(runner.kernel).send_here(runner, target, text)
    return {"success": False, "error": f"bad request: unknown op {req.get('op')!r}"}


def _resolve(directory: Directory, target: str) -> Any:
    resolved = directory.resolve(target)
    directory.check(resolved)
    return resolved


def _on_loop(runner: Any) -> bool:
    try:
        return asyncio.get_running_loop() is runner.loop
    except RuntimeError:
        return False


def _failed(target: str, error: str) -> dict[str, Any]:
    return {"success": False, "target": target, "error": error}

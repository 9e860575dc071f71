"""The ``send_message`` tool (toolset ``messaging``), with Hermes Agent 0.19's name and
arguments: ``action`` (``send``, the default, or ``list``), ``target`` and ``message``. It
sends through the ``delivery`` service (:mod:`.delivery`): the target is checked against the
platform's allow-lists, and in a tainted turn the call needs the user's approval (the agent's
taint policy lists it as delivery)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from hermes_agent.api import tool_error
from hermes_agent.api.services import DELIVERY

if TYPE_CHECKING:
    from hermes_agent import Kernel

class SendMessageTool:
    def __init__(self, kernel: Kernel):
        self.kernel = kernel

    def __call__(self, args: dict[str, Any], **_: Any) -> str:
        action = str(args.get("action") or "send").strip().lower()
        delivery = self.kernel.service(DELIVERY)
        if action == "list":
            platform = str(args.get("target") or "").strip().lower() or None
            targets = delivery.targets(platform)
            note = ("" if targets else "no home channel or named channel is configured; "
                    "'platform:chat_id' still reaches a chat the gateway answers or one on "
                    "the platform's allowed_chats")
            return json.dumps({"targets": targets, **({"note": note} if note else {})})
        if action != "send":
            return tool_error(f"unknown action {action!r}: use 'send' or 'list'")
        target, message = str(args.get("target") or ""), str(args.get("message") or "")
        if not target.strip() or not message.strip():
            return tool_error("'target' and 'message' are both needed to send (action 'list' "
                              "shows the targets)")
        result = delivery.send(target, message)
        if not result.get("success"):
            return tool_error(str(result.get("error") or "not delivered"),
                              target=result.get("target", target))
        return json.dumps(result)

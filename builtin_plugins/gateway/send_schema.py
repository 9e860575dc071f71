"""The ``send_message`` tool's schema: Hermes Agent 0.19's name and arguments (``action``,
``target``, ``message``). Imports nothing, so registering the tool loads no gateway code."""

from __future__ import annotations

from typing import Any

SEND_MESSAGE: dict[str, Any] = {
    "name": "send_message",
    "description": (
        "Send a message to a chat on a connected messaging platform, or list where messages "
        "can go. When the user names a channel or person rather than a bare platform, call "
        "action 'list' first and pick the matching target; a bare platform name ('telegram') "
        "sends to its home channel."),
    "parameters": {
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": ["send", "list"],
                       "description": "'send' (the default) sends the message; 'list' returns "
                                      "the home channels and named channels of each platform."},
            "target": {"type": "string",
                       "description": "Where to send: 'platform' (its home channel), "
                                      "'platform:chat_id', 'platform:chat_id:thread_id' (a "
                                      "Telegram topic, a Discord thread), 'platform:#name' "
                                      "or a configured channel name. Examples: 'telegram', "
                                      "'telegram:-1001234567890:17585', 'discord:#ops'."},
            "message": {"type": "string", "description": "The text to send."},
        },
        "required": [],
    },
}

"""The session_search tool's schema (OpenAI function format)."""

from __future__ import annotations

from typing import Any

DEFAULT_LIMIT = 3
MAX_LIMIT = 5
ROLES = ("user", "assistant", "tool")

SESSION_SEARCH: dict[str, Any] = {
    "name": "session_search",
    "description": (
        "Search the user's earlier conversations (not this one) for what was said or done, "
        "and get a summary of each matching conversation focused on the query. Use it when the "
        "user refers to something from before (\"the fix we found last week\", \"that "
        "deployment script\") instead of asking them to repeat it. Tool calls and their "
        "arguments are searched too. With an empty query it lists the most recent "
        "conversations (title, start, first message) without reading them."),
    "parameters": {
        "type": "object",
        "properties": {
            "query": {
                "type": "string",
                "description": (
                    "Keywords to find. Several words must all appear; \"quoted phrase\", "
                    "a OR b, a NOT b and prefix* work too. Chinese, Japanese and Korean text "
                    "is matched as written. Empty: list recent conversations."),
            },
            "role_filter": {
                "type": "string",
                "description": ("Only match messages of these roles, comma-separated: user, "
                                "assistant, tool. Empty: all."),
            },
            "limit": {
                "type": "integer", "minimum": 1, "maximum": MAX_LIMIT,
                "description": f"How many conversations to return (default {DEFAULT_LIMIT}, "
                               f"at most {MAX_LIMIT}).",
            },
        },
        "required": [],
    },
}

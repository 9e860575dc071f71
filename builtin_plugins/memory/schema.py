"""The ``memory`` tool's function schema (byte-stable: it is part of every cached prefix)."""

from __future__ import annotations

from typing import Any

MEMORY: dict[str, Any] = {
    "name": "memory",
    "description": (
        "Save lasting facts across sessions. target='memory': your own notes (environment "
        "details, conventions, lessons learned); target='user': the user profile (name, "
        "preferences, communication style). action='add' saves `content` as a new entry; "
        "'replace' swaps the entry containing `old_text` for `content`; 'remove' deletes the "
        "entry containing `old_text`. `old_text` is a short piece of text that occurs in "
        "exactly one entry. Each file has a character limit: when it is full, consolidate "
        "(replace or remove entries) before adding. Changes are saved at once and appear in "
        "the system prompt from the next session on."),
    "parameters": {
        "type": "object",
        "properties": {
            "target": {"type": "string", "enum": ["memory", "user"],
                       "description": "memory: your notes; user: the user profile"},
            "action": {"type": "string", "enum": ["add", "replace", "remove"]},
            "content": {"type": "string",
                        "description": "The entry's text (add and replace)"},
            "old_text": {"type": "string",
                         "description": "Text occurring in exactly one entry (replace, remove)"},
        },
        "required": ["target", "action"],
    },
}

"""The tools the mem0 provider offers the model (in the ``memory`` toolset)."""

from __future__ import annotations

from typing import Any

SEARCH, ADD, FORGET = "mem0_search", "mem0_add", "mem0_forget"

SCHEMAS: list[dict[str, Any]] = [
    {"name": SEARCH,
     "description": "Search long-term memory (Mem0) for facts about the user: preferences, "
                    "projects, past decisions. Returns matching memories with their ids.",
     "parameters": {"type": "object", "properties": {
         "query": {"type": "string", "description": "What to look for, in plain words."},
         "top_k": {"type": "integer", "minimum": 1, "maximum": 50,
                   "description": "How many memories to return (default 5)."}},
         "required": ["query"]}},
    {"name": ADD,
     "description": "Save one fact worth remembering across sessions in long-term memory "
                    "(Mem0), as a short self-contained statement.",
     "parameters": {"type": "object", "properties": {
         "content": {"type": "string", "description": "The fact to remember."}},
         "required": ["content"]}},
    {"name": FORGET,
     "description": "Delete a memory from long-term memory (Mem0) by its id (ids come from "
                    "mem0_search). Use when a memory is wrong or the user asks to forget it.",
     "parameters": {"type": "object", "properties": {
         "memory_id": {"type": "string", "description": "The id of the memory to delete."}},
         "required": ["memory_id"]}},
]


def brief(memory: dict[str, Any]) -> dict[str, Any]:
    """A memory as the model sees it: id, text, score when there is one."""
    item = {"id": memory.get("id"), "memory": memory.get("memory") or memory.get("text")}
    if isinstance(memory.get("score"), (int, float)):
        item["score"] = round(float(memory["score"]), 3)
    return item

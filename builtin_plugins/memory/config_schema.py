"""Builtin memory's keys in the ``memory`` section of config.yaml. The kernel owns that
section's ``memory.provider`` (the memory slot's selection); a section a builtin plugin
declares for a kernel key extends the kernel's model, so this one adds only the limits and
the memory manager's timeouts (the agent plugin reads them).
Imports nothing but pydantic."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

MEMORY_CHAR_LIMIT = 2200
USER_CHAR_LIMIT = 1375


class MemorySection(BaseModel):
    model_config = ConfigDict(extra="allow")

    memory_char_limit: int = Field(MEMORY_CHAR_LIMIT, gt=0)  # MEMORY.md, in characters
    user_char_limit: int = Field(USER_CHAR_LIMIT, gt=0)  # USER.md, in characters
    # how long the agent's memory manager waits for a provider (seconds): on_turn_start and
    # prefetch hold a turn at most this long; sync_turn and the rest run in the background
    prefetch_timeout: float = Field(3.0, gt=0)
    sync_timeout: float = Field(10.0, gt=0)

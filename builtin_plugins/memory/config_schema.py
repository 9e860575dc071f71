"""Builtin memory's keys in the ``memory`` section of config.yaml. The kernel owns that
section's ``memory.provider`` (the memory slot's selection); a section a builtin plugin
declares for a kernel key extends the kernel's model, so this one adds only the limits.
Imports nothing but pydantic."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

MEMORY_CHAR_LIMIT = 2200
USER_CHAR_LIMIT = 1375


class MemorySection(BaseModel):
    model_config = ConfigDict(extra="allow")

    memory_char_limit: int = Field(MEMORY_CHAR_LIMIT, gt=0)  # MEMORY.md, in characters
    user_char_limit: int = Field(USER_CHAR_LIMIT, gt=0)  # USER.md, in characters

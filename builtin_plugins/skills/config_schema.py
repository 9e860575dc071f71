"""The ``skills`` section of config.yaml. Other keys of the original's section are accepted
and ignored. Imports nothing but pydantic."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

MAX_SKILL_BYTES = 256_000  # the most a SKILL.md may hold to be loaded at all (catalog.py)


class SkillsSection(BaseModel):
    model_config = ConfigDict(extra="allow")

    # skill names left out of the system prompt's index (still loadable with skill_view)
    disabled: list[str] = Field(default_factory=list)
    # the most a SKILL.md that skill_manage writes may hold (bytes): every byte of it reaches
    # the model when the skill is loaded, in each later session
    max_skill_bytes: int = Field(100_000, ge=1000, le=MAX_SKILL_BYTES)

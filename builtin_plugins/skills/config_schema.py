"""The ``skills`` section of config.yaml. Other keys of the original's section are accepted
and ignored. Imports nothing but pydantic."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class SkillsSection(BaseModel):
    model_config = ConfigDict(extra="allow")

    # skill names left out of the system prompt's index (still loadable with skill_view)
    disabled: list[str] = Field(default_factory=list)

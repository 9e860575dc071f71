"""The config.yaml keys the recall plugin reads: ``session_search``, its own section (it also
reads ``sessions.auto_title``, which the sessions plugin's section holds). Imports nothing but
pydantic."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

MAX_CONCURRENCY = 5


class SessionSearchSection(BaseModel):
    model_config = ConfigDict(extra="allow")

    summarize: bool = True  # false: always return the matching snippets, never call a model
    max_concurrency: int = Field(3, ge=1, le=MAX_CONCURRENCY)  # summaries requested at once
    timeout: float = Field(90.0, gt=0)  # seconds for all the summaries of one search
    window_chars: int = Field(100_000, ge=2_000)  # transcript characters sent per session


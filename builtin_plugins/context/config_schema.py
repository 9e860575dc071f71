"""The ``compression`` section of config.yaml (``context.engine``, the kernel's, picks the
engine; these keys tune the default one). Imports nothing but pydantic."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class CompressionSection(BaseModel):
    model_config = ConfigDict(extra="allow")

    enabled: bool = True
    threshold: float = Field(0.50, gt=0, le=1)  # share of the model's window that triggers it
    target_ratio: float = Field(0.20, ge=0.05, le=0.80)  # tail budget: share of the threshold
    protect_first_n: int = Field(3, ge=0)  # messages kept at the start
    protect_last_n: int = Field(20, ge=1)  # at most this many kept at the end
    # seconds without automatic attempts after the summariser failed (/compress still works)
    failure_cooldown: float = Field(600.0, ge=0)

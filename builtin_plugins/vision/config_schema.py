"""The ``vision`` section of config.yaml: limits on the images kept with sessions
(docs/vision.md). Imports nothing but pydantic."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class VisionSection(BaseModel):
    model_config = ConfigDict(extra="allow")

    max_image_bytes: int = Field(10_000_000, gt=0)  # per image; larger ones are refused
    max_images: int = Field(10, gt=0)  # per message; more are left out with a note

"""The ``image_gen`` section of config.yaml (the original's). The kernel owns
``image_gen.provider`` (the slot's selection); ``image_gen.model`` is the model of the
selected provider unless its own block (``image_gen.openai.model``) names one. Imports
nothing but pydantic."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class ImageGenSection(BaseModel):
    model_config = ConfigDict(extra="allow")

    model: str = ""  # the selected provider's model ("": the provider's default)
    max_image_bytes: int = Field(20 * 1024 * 1024, gt=0)  # a larger image is not saved
    timeout: float = Field(180.0, gt=0)  # seconds one generation may take

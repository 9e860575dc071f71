"""The config.yaml keys the model-provider layer reads, validated with the rest of the file
(``config_sections:`` in its plugin.yaml). Imports nothing but pydantic.

``model`` keeps the shape config files written for Hermes Agent 0.19 use, including the
plain-string form ``model: <id>``.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field


class ModelSection(BaseModel):
    model_config = ConfigDict(extra="allow")

    default: str = ""  # the model id
    provider: str = ""
    base_url: str = ""
    api_key: str = ""
    timeout: float | None = None  # seconds per model call
    max_retries: int | None = None  # retries after the first attempt (default 3)
    retry_delay: float | None = None  # seconds before the first retry, doubling (default 2)
    context_length: int | None = Field(None, gt=0)  # the model's window when hermes guesses wrong
    # output tokens per call (default: the provider's; 0: no cap, the server's limit applies)
    max_tokens: int | None = Field(None, ge=0)
    # whether the model sees images (None: its provider profile's supports_vision says)
    supports_vision: bool | None = None


class AuxiliaryTask(BaseModel):
    """``auxiliary.<task>``: where one side task (compression, title_generation, ...) runs."""

    model_config = ConfigDict(extra="allow")
    report_unknown_keys: ClassVar[bool] = False  # tasks carry provider-specific extras

    provider: str = "auto"
    model: str = ""
    base_url: str = ""
    api_key: str = ""
    timeout: float | None = None
    extra_body: dict[str, Any] = Field(default_factory=dict)


model_key = (ModelSection | str, Field(default_factory=ModelSection))
fallback_providers = (list[dict[str, Any] | str], Field(default_factory=list))
auxiliary = (dict[str, AuxiliaryTask], Field(default_factory=dict))

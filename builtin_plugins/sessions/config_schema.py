"""The ``sessions`` section of config.yaml beyond the kernel's ``sessions.store`` (the store
slot's selection). Imports nothing but pydantic."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class SessionsSection(BaseModel):
    model_config = ConfigDict(extra="allow")

    auto_title: bool = True  # name new sessions after their first exchange (the recall plugin)
    dsn: str = ""  # a server-backed store's address (else its env var, e.g. HERMES_POSTGRES_DSN)

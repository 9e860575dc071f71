"""The ``sessions`` section of config.yaml beyond the kernel's ``sessions.store`` (the slot's
selection): where a server-backed store (``postgres``) connects. Imports nothing but pydantic."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class SessionsSection(BaseModel):
    model_config = ConfigDict(extra="allow")

    # A server store's address, e.g. postgresql://user@host:5432/hermes; HERMES_POSTGRES_DSN
    # in the environment (or $HERMES_HOME/.env) is used when this is empty.
    dsn: str = ""

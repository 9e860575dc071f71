"""The store's API edge: every argument is normalised or refused before it reaches SQLite.
The rules are shared by every session store (see
``hermes_agent.kits.sql.values.public_methods_at_edge``)."""

from __future__ import annotations

from hermes_agent.kits.sql.values import (
    MAX_STORE_LIMIT as MAX_LIMIT, clean_text, public_methods_at_edge,
)

__all__ = ["MAX_LIMIT", "clean_text", "public_methods_at_edge"]

"""The ``web`` section of config.yaml read once per call, defaults filled in."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from pydantic import ValidationError

from .config_schema import WebSection

if TYPE_CHECKING:
    from hermes_agent import Kernel

log = logging.getLogger("hermes_agent.web")

CAPABILITIES = ("search", "extract")


class WebSettings(WebSection):
    backend: str = ""  # the kernel's key: the web_search slot's selection

    def selection(self, capability: str) -> tuple[str, str]:
        """The backend selected for ``capability`` and the key that selected it
        (``("", "")`` when none is)."""
        own = str(getattr(self, f"{capability}_backend") or "").strip()
        if own:
            return own, f"web.{capability}_backend"
        if self.backend.strip():
            return self.backend.strip(), "web.backend"
        return "", ""

    def fallbacks(self, primary: str) -> list[str]:
        """``web.fallback`` in order, without the primary and without repeats."""
        names = [str(n).strip() for n in self.fallback if str(n).strip()]
        return [n for n in dict.fromkeys(names) if n != primary]


def load_settings(kernel: Kernel) -> WebSettings:
    """``web`` from config.yaml (validated when it was loaded; a value made invalid later, e.g.
    by a plugin changing the config in memory, falls back to its default)."""
    data = kernel.config.get("web") or {}
    if not isinstance(data, dict):
        data = {}
    try:
        return WebSettings.model_validate(data)
    except ValidationError as exc:
        bad = {str(err["loc"][0]) for err in exc.errors() if err["loc"]}
        log.warning("web: invalid keys in config.yaml (%s); using their defaults",
                    ", ".join(sorted(bad)))
        return WebSettings.model_validate({k: v for k, v in data.items() if k not in bad})

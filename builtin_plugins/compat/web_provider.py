"""The base class of web providers written for Hermes Agent 0.19 (dict results), served as
``agent.web_search_provider.WebSearchProvider``. hermes's own web backends subclass
``hermes_agent.api.WebBackend``; the web plugin adapts these providers to it
(``hermes_agent.kits.web_backends.as_web_backend``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any


class WebSearchProvider(ABC):
    """A web search and/or extraction backend (the ``web_search`` slot, chosen by
    ``web.backend``). Failures return ``{"success": False, "error": str}``."""

    @property
    @abstractmethod
    def name(self) -> str:
        """A short identifier, used by ``web.backend``."""

    @abstractmethod
    def is_available(self) -> bool:
        """Whether the backend is configured. No network calls."""

    @property
    def display_name(self) -> str:
        return self.name

    def supports_search(self) -> bool:
        return True

    def supports_extract(self) -> bool:
        return False

    def search(self, query: str, limit: int = 5) -> dict[str, Any]:
        """``{"success": True, "data": {"web": [{title, url, description, position}]}}``."""
        return {"success": False, "error": f"{self.name} does not support search"}

    def extract(self, urls: list[str], **kwargs: Any) -> list[dict[str, Any]]:
        """``[{url, title, content, raw_content, metadata?, error?}]`` (may be async)."""
        return [{"url": url, "error": f"{self.name} does not support extraction"} for url in urls]

    def get_setup_schema(self) -> dict[str, Any]:
        return {"name": self.name, "env_vars": []}

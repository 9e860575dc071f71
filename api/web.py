"""The web backends' contract: what ``web_search`` and ``web_extract`` get from a backend.

A backend is a plugin in the ``web_search`` slot (``web.backend`` selects it; also
``web.search_backend`` / ``web.extract_backend`` per capability). It subclasses
:class:`WebBackend` and returns normalised results, or raises :class:`WebError` saying what
went wrong and how to fix it. Providers written for Hermes Agent 0.19 (the dict-returning
``agent.web_search_provider.WebSearchProvider`` the compat plugin serves) are adapted by
``hermes_agent.kits.web_backends.as_web_backend``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import asdict, dataclass
from typing import Any

__all__ = ["WebResult", "WebPage", "WebError", "WebBackend"]

#: WebError kinds: what the tool tells the model (and the user) happened.
ERROR_KINDS = ("missing_key", "unreachable", "timeout", "rate_limited", "http", "malformed",
               "refused", "unsupported")


@dataclass(frozen=True)
class WebResult:
    """One search hit."""

    title: str
    url: str
    snippet: str = ""
    published: str | None = None  # ISO date when the backend knows it
    source: str = ""  # the backend's name (or the engine behind a meta-search)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class WebPage:
    """One extracted page: its content as markdown, or why there is none."""

    url: str
    title: str = ""
    content: str = ""  # markdown
    status: str = "ok"  # "ok" or "error"
    error: str = ""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class WebError(Exception):
    """A backend call that failed, with a message that states the fix.

    ``kind`` is one of :data:`ERROR_KINDS`; ``retry_after`` (seconds) is set for
    ``rate_limited`` when the server said how long to wait."""

    def __init__(self, message: str, kind: str = "http", *, retry_after: float | None = None,
                 status: int | None = None):
        super().__init__(message)
        self.kind = kind if kind in ERROR_KINDS else "http"
        self.retry_after = retry_after
        self.status = status


class WebBackend(ABC):
    """A web search and/or extraction backend."""

    #: environment variables the backend reads (the plugin.yaml declares them too)
    env_vars: tuple[str, ...] = ()

    @property
    @abstractmethod
    def name(self) -> str:
        """The name ``web.backend`` selects."""

    @abstractmethod
    def is_available(self) -> bool:
        """Whether its key or server is configured. No network calls."""

    def unavailable_reason(self) -> str:
        """Optional: why :meth:`is_available` is false, stating the fix (the variable to set,
        or the ``pip install`` command of a missing library); ``""`` when it has nothing to
        say. No network calls. A reason naming ``pip install`` is reported as
        ``missing_dependency``, any other as ``missing_key``."""
        return ""

    def supports_search(self) -> bool:
        return type(self).search is not WebBackend.search

    def supports_extract(self) -> bool:
        return type(self).extract is not WebBackend.extract

    def search(self, query: str, limit: int = 5, **options: Any) -> list[WebResult]:
        """Up to ``limit`` results for ``query``."""
        raise WebError(f"web backend {self.name!r} does not search; set web.search_backend "
                       "to one that does", "unsupported")

    def extract(self, urls: list[str], **options: Any) -> list[WebPage]:
        """One :class:`WebPage` per URL, in order (a failed page has ``status="error"``)."""
        raise WebError(f"web backend {self.name!r} does not extract pages; set "
                       "web.extract_backend to one that does", "unsupported")

    def get_config_schema(self) -> list[dict[str, Any]]:
        """Settings (``key``, ``description``, ``secret``, ``required``, ``default``,
        ``env_var``, ``url``), as memory providers declare them."""
        return []

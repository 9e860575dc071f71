"""The web backends' contract: what ``web_search`` and ``web_extract`` get from a backend.

A backend is a plugin in the ``web_search`` slot (``web.backend`` selects it; also
``web.search_backend`` / ``web.extract_backend`` per capability). It subclasses
:class:`WebBackend` and returns normalised results, or raises :class:`WebError` saying what
went wrong and how to fix it. Providers written for Hermes Agent 0.19 (the dict-returning
:class:`~hermes_agent.api.WebSearchProvider`) are adapted by :func:`as_web_backend`.
"""

from __future__ import annotations

import asyncio
import inspect
from abc import ABC, abstractmethod
from dataclasses import asdict, dataclass
from typing import Any

__all__ = ["WebResult", "WebPage", "WebError", "WebBackend", "as_web_backend"]

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


class _OriginalProvider(WebBackend):
    """A provider written for the original (dict results, ``{"success": False, "error"}``
    on failure, ``extract`` possibly ``async``) behind the :class:`WebBackend` interface."""

    def __init__(self, provider: Any):
        self.provider = provider

    @property
    def name(self) -> str:
        return str(self.provider.name)

    def is_available(self) -> bool:
        return bool(self.provider.is_available())

    def unavailable_reason(self) -> str:
        reason = getattr(self.provider, "unavailable_reason", None)
        return str(reason() or "") if callable(reason) else ""

    def supports_search(self) -> bool:
        check = getattr(self.provider, "supports_search", None)
        return bool(check()) if callable(check) else callable(getattr(self.provider, "search", None))

    def supports_extract(self) -> bool:
        check = getattr(self.provider, "supports_extract", None)
        return bool(check()) if callable(check) else False

    def search(self, query: str, limit: int = 5, **options: Any) -> list[WebResult]:
        reply = self.provider.search(query, limit)
        if not isinstance(reply, dict) or reply.get("success", True) is False:
            raise WebError(_failure(self.name, reply), "http")
        rows = (reply.get("data") or {}).get("web") or []
        return [WebResult(title=str(r.get("title") or ""), url=str(r.get("url") or ""),
                          snippet=str(r.get("description") or r.get("snippet") or ""),
                          published=r.get("published") or r.get("date"), source=self.name)
                for r in rows if isinstance(r, dict) and r.get("url")][:limit]

    def extract(self, urls: list[str], **options: Any) -> list[WebPage]:
        reply = self.provider.extract(list(urls), **options)
        if inspect.isawaitable(reply):
            reply = asyncio.run(_awaited(reply))
        if isinstance(reply, dict):  # {"success": False, "error": ...}
            raise WebError(_failure(self.name, reply), "http")
        pages = []
        for url, row in zip(urls, list(reply or []) + [None] * len(urls)):
            if not isinstance(row, dict):
                pages.append(WebPage(url, status="error", error="no result from the backend"))
            elif row.get("error"):
                pages.append(WebPage(str(row.get("url") or url), status="error",
                                     error=str(row["error"])))
            else:
                pages.append(WebPage(str(row.get("url") or url), str(row.get("title") or ""),
                                     str(row.get("content") or row.get("raw_content") or "")))
        return pages


async def _awaited(value: Any) -> Any:
    return await value


def _failure(name: str, reply: Any) -> str:
    error = reply.get("error") if isinstance(reply, dict) else None
    return f"web backend {name!r} failed: {error or 'an answer of an unexpected shape'}"


def as_web_backend(provider: Any) -> WebBackend:
    """``provider`` as a :class:`WebBackend` (the original's providers are adapted)."""
    return provider if isinstance(provider, WebBackend) else _OriginalProvider(provider)

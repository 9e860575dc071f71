"""Owner: the builtin plugin `web`. Any registered web provider as a
:class:`~hermes_agent.api.WebBackend`: providers written for Hermes Agent 0.19 (dict results,
``{"success": False, "error"}`` on failure, ``extract`` possibly ``async``) are adapted. Not
part of the contract docs/api.md locks (docs/kits.md)."""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

from hermes_agent.api import WebBackend, WebError, WebPage, WebResult


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

"""The Tavily backend: ``POST /search`` and ``POST /extract`` with ``Authorization: Bearer``.

Search options: ``search_depth`` (``basic``, ``advanced``), ``topic`` (``general``,
``news``, ``finance``), ``time_range`` (``day``, ``week``, ``month``, ``year``),
``include_domains`` / ``exclude_domains`` (lists), ``country`` and ``include_answer`` (the
answer is logged, not returned: results are pages). At most 20 results a call. Extract
options: ``extract_depth`` (``basic``, ``advanced``); pages come back as markdown.
"""

from __future__ import annotations

import logging
from typing import Any

from hermes_agent.api import WebError, WebPage, WebResult
from hermes_agent.kits.http import HTTPWebBackend, WebService

KEY_ENV, URL_ENV = "TAVILY_API_KEY", "TAVILY_BASE_URL"
KEY_URL = "https://app.tavily.com/home"
MAX_RESULTS = 20
SEARCH_OPTIONS = ("search_depth", "topic", "time_range", "include_domains", "exclude_domains",
                  "country", "include_answer", "days")
log = logging.getLogger("hermes_agent.plugins.tavily")


class TavilyBackend(HTTPWebBackend):
    service = WebService("Tavily", key_env=KEY_ENV, key_url=KEY_URL, url_env=URL_ENV)
    default_url = "https://api.tavily.com"
    name = "tavily"

    def auth_headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.api_key}"}

    def search(self, query: str, limit: int = 5, **options: Any) -> list[WebResult]:
        body: dict[str, Any] = {"query": query, "max_results": min(max(int(limit), 1),
                                                                   MAX_RESULTS)}
        for key in SEARCH_OPTIONS:
            value = self.option(options, key)
            if value is not None:
                body[key] = value
        data = self.call("POST", "/search", json_body=body)
        rows = data.get("results")
        if not isinstance(rows, list):
            raise WebError("Tavily's search answer has no results list", "malformed")
        if data.get("answer"):
            log.debug("tavily answer: %s", data["answer"])
        return [result for row in rows if (result := to_result(row))][:max(limit, 0)]

    def extract(self, urls: list[str], **options: Any) -> list[WebPage]:
        if not urls:
            return []
        body = {"urls": list(urls), "format": "markdown",
                "extract_depth": self.option(options, "extract_depth", "basic")}
        data = self.call("POST", "/extract", json_body=body)
        found = {row.get("url"): row for row in data.get("results") or []
                 if isinstance(row, dict)}
        failed = {row.get("url"): row for row in data.get("failed_results") or []
                  if isinstance(row, dict)}
        pages = []
        for url in urls:
            if url in found:
                pages.append(WebPage(url, str(found[url].get("title") or ""),
                                     str(found[url].get("raw_content") or "")))
            else:
                reason = (failed.get(url) or {}).get("error") or "Tavily returned nothing for it"
                pages.append(WebPage(url, status="error", error=str(reason)))
        return pages

    def get_config_schema(self) -> list[dict[str, Any]]:
        return [
            {"key": "api_key", "description": "Tavily API key", "secret": True,
             "required": True, "env_var": KEY_ENV, "url": KEY_URL},
            {"key": "search_depth", "description": "basic (1 credit) or advanced (2 credits)",
             "default": "basic"},
            {"key": "topic", "description": "general, news or finance", "default": "general"},
            {"key": "timeout", "description": "seconds to wait for an answer", "default": 15},
        ]

    def explain(self, status: int, body: Any, detail: str) -> WebError | None:
        """Tavily's own statuses: 432 (the plan's limit) and 433 (the pay-as-you-go limit)."""
        return plan_limit(status, detail)


def to_result(row: Any) -> WebResult | None:
    if not isinstance(row, dict) or not row.get("url"):
        return None
    published = row.get("published_date")
    return WebResult(title=str(row.get("title") or row["url"]), url=str(row["url"]),
                     snippet=" ".join(str(row.get("content") or "").split()),
                     published=str(published) if published else None, source="tavily")


def plan_limit(status: int, detail: str) -> WebError | None:
    if status in (432, 433):
        which = "plan's credit limit" if status == 432 else "pay-as-you-go spending limit"
        return WebError(f"Tavily refused the request: the account's {which} is reached "
                        f"(HTTP {status}){': ' + detail if detail else ''}; raise it at "
                        f"{KEY_URL} or wait for the next billing period", "rate_limited",
                        status=status)
    return None

"""The Brave Search backend: ``GET /res/v1/web/search`` with ``X-Subscription-Token``.

Options: ``offset`` (the page, 0 to 9, of ``count`` results), ``freshness`` (``pd``, ``pw``,
``pm``, ``py`` or ``YYYY-MM-DDtoYYYY-MM-DD``), ``country`` (two letters), ``search_lang``
and ``safesearch`` (``off``, ``moderate``, ``strict``). Brave returns at most 20 results a
call. An unknown token is answered 422 ``SUBSCRIPTION_TOKEN_INVALID``, not 401.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from hermes_agent.api import WebError, WebResult
from hermes_agent.kits.http import HTTPWebBackend, WebService

KEY_ENV, URL_ENV = "BRAVE_SEARCH_API_KEY", "BRAVE_SEARCH_BASE_URL"
KEY_URL = "https://api-dashboard.search.brave.com/app/keys"
MAX_COUNT, MAX_OFFSET = 20, 9
_FRESHNESS = re.compile(r"^(pd|pw|pm|py|\d{4}-\d{2}-\d{2}to\d{4}-\d{2}-\d{2})\Z")
_KEY_CODES = ("SUBSCRIPTION_TOKEN_INVALID", "SUBSCRIPTION_NOT_FOUND", "UNAUTHORIZED")


class BraveBackend(HTTPWebBackend):
    service = WebService("Brave Search", key_env=KEY_ENV, key_url=KEY_URL, url_env=URL_ENV)
    default_url = "https://api.search.brave.com"
    name = "brave"

    def auth_headers(self) -> dict[str, str]:
        return {"X-Subscription-Token": self.api_key}

    def search(self, query: str, limit: int = 5, **options: Any) -> list[WebResult]:
        count = min(max(int(limit), 1), MAX_COUNT)
        params = {"q": query, "count": count, **self.search_params(options)}
        web = self.call("GET", "/res/v1/web/search", params=params).get("web")
        rows = web.get("results", []) if isinstance(web, dict) else []  # no "web": no hits
        if not isinstance(rows, list):
            raise WebError("Brave Search's web.results is not a list", "malformed")
        return [result for row in rows if (result := to_result(row))][:max(limit, 0)]

    def search_params(self, options: Mapping[str, Any]) -> dict[str, Any]:
        params: dict[str, Any] = {}
        offset = self.int_option(options, "offset", 0, MAX_OFFSET)  # a page of `count`
        if offset is not None:
            params["offset"] = offset
        freshness = self.option(options, "freshness")
        if freshness:
            if not _FRESHNESS.match(str(freshness)):
                raise WebError("freshness must be pd, pw, pm, py (past day, week, month, "
                               f"year) or YYYY-MM-DDtoYYYY-MM-DD, not {freshness!r}", "http")
            params["freshness"] = str(freshness)
        for key in ("country", "search_lang", "safesearch"):
            if self.option(options, key):
                params[key] = str(self.option(options, key))
        return params

    def explain(self, status: int, body: Any, detail: str) -> WebError | None:
        error = body.get("error") if isinstance(body, dict) else None
        code = str(error.get("code") or "") if isinstance(error, dict) else ""
        if status in (401, 403) or code in _KEY_CODES:
            return WebError(f"{KEY_ENV} was refused by Brave Search (HTTP {status}"
                            f"{', ' + code if code else ''}); check it at {KEY_URL} and "
                            f"update {KEY_ENV}", "missing_key", status=status)
        if code == "VALIDATION" and isinstance(error, dict):
            wrong = [f"{(e.get('loc') or ['?'])[-1]}: {e.get('msg')}"
                     for e in (error.get("meta") or {}).get("errors") or []
                     if isinstance(e, dict)]
            return WebError(f"Brave Search rejected the request's parameters (HTTP {status}):"
                            f" {'; '.join(wrong) or detail}", "http", status=status)
        return None

    def get_config_schema(self) -> list[dict[str, Any]]:
        return [
            {"key": "api_key", "description": "Brave Search API subscription token",
             "secret": True, "required": True, "env_var": KEY_ENV, "url": KEY_URL},
            {"key": "country", "description": "default country of results (e.g. us, de)"},
            {"key": "safesearch", "description": "off, moderate or strict"},
            {"key": "timeout", "description": "seconds to wait for an answer", "default": 15},
        ]


def to_result(row: Any) -> WebResult | None:
    if not isinstance(row, dict) or not row.get("url"):
        return None
    published = row.get("page_age") or row.get("age")
    snippet = re.sub(r"</?strong>", "", str(row.get("description") or ""))  # query words
    return WebResult(title=str(row.get("title") or row["url"]), url=str(row["url"]),
                     snippet=" ".join(snippet.split()),
                     published=str(published) if published else None, source="brave")

"""The SearXNG backend: ``GET {SEARXNG_URL}/search?q=...&format=json``.

Options: ``categories`` (e.g. ``general,news``), ``language`` (``en``, ``de-CH``, ``all``),
``pageno`` (1-based), ``time_range`` (``day``, ``week``, ``month``, ``year``) and
``safesearch`` (0, 1, 2). SearXNG has no page size: a page holds what its engines returned,
and ``limit`` trims it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hermes_agent.api import WebError, WebResult
from hermes_agent.kits.http import HTTPWebBackend, WebService

URL_ENV = "SEARXNG_URL"
TIME_RANGES = ("day", "week", "month", "year")
SETTINGS_URL = "https://docs.searxng.org/admin/settings/settings_search.html"


class SearXNGBackend(HTTPWebBackend):
    service = WebService("SearXNG", url_env=URL_ENV,
                         rate_hint="or, for your own instance, turn its bot limiter off "
                                   "(`server: limiter: false` in settings.yml)")
    name = "searxng"

    def search(self, query: str, limit: int = 5, **options: Any) -> list[WebResult]:
        params = {"q": query, "format": "json", **self.search_params(options)}
        rows = self.call("GET", "/search", params=params).get("results")
        if not isinstance(rows, list):
            raise WebError(f"SearXNG at {self.base_url} answered without a results list; is "
                           f"{URL_ENV} the instance's base URL?", "malformed")
        return [result for row in rows if (result := to_result(row))][:max(limit, 0)]

    def search_params(self, options: Mapping[str, Any]) -> dict[str, Any]:
        """SearXNG's query parameters for the options (the settings supply defaults)."""
        params: dict[str, Any] = {}
        categories = self.option(options, "categories")
        if categories:
            params["categories"] = ",".join(categories) \
                if isinstance(categories, (list, tuple)) else str(categories)
        if self.option(options, "language"):
            params["language"] = str(self.option(options, "language"))
        params["pageno"] = self.int_option(options, "pageno", 1)
        time_range = self.option(options, "time_range")
        if time_range:
            if time_range not in TIME_RANGES:
                raise WebError(f"time_range must be one of {', '.join(TIME_RANGES)}, not "
                               f"{time_range!r}", "http")
            params["time_range"] = time_range
        params["safesearch"] = self.int_option(options, "safesearch", 0, 2)  # off .. strict
        return {key: value for key, value in params.items() if value is not None}

    def explain(self, status: int, body: Any, detail: str) -> WebError | None:
        """SearXNG answers 403 when the json format is off in its settings."""
        if status == 403:
            return WebError("SearXNG refused the JSON format (HTTP 403): enable it in the "
                            "instance's settings.yml with `search: formats: [html, json]` "
                            f"and restart SearXNG (see {SETTINGS_URL})", "http", status=403)
        return None

    def get_config_schema(self) -> list[dict[str, Any]]:
        return [
            {"key": "url", "description": "base URL of your SearXNG instance", "secret": False,
             "required": True, "env_var": URL_ENV, "url": SETTINGS_URL},
            {"key": "language", "description": "default search language (e.g. en, all)"},
            {"key": "safesearch", "description": "default safe search: 0, 1 or 2"},
            {"key": "timeout", "description": "seconds to wait for an answer", "default": 15},
        ]


def to_result(row: Any) -> WebResult | None:
    if not isinstance(row, dict) or not row.get("url"):
        return None
    engines = row.get("engines") if isinstance(row.get("engines"), list) else []
    engine = str(row.get("engine") or (engines[0] if engines else ""))
    return WebResult(title=str(row.get("title") or row["url"]), url=str(row["url"]),
                     snippet=" ".join(str(row.get("content") or "").split()),
                     published=str(row["publishedDate"]) if row.get("publishedDate") else None,
                     source=f"searxng/{engine}" if engine else "searxng")

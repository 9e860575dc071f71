"""The SearXNG backend: ``GET {SEARXNG_URL}/search?q=...&format=json``.

Options: ``categories`` (e.g. ``general,news``), ``language`` (``en``, ``de-CH``, ``all``),
``pageno`` (1-based), ``time_range`` (``day``, ``week``, ``month``, ``year``) and
``safesearch`` (0, 1, 2). SearXNG has no page size: a page holds what its engines returned,
and ``limit`` trims it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from hermes_agent.api import (WebBackend, WebError, WebHTTP, WebResult, WebService,
                              http_options)

URL_ENV = "SEARXNG_URL"
SERVICE = WebService("SearXNG", url_env=URL_ENV,
                     rate_hint="or, for your own instance, turn its bot limiter off "
                               "(`server: limiter: false` in settings.yml)")
TIME_RANGES = ("day", "week", "month", "year")
SETTINGS_URL = "https://docs.searxng.org/admin/settings/settings_search.html"


class SearXNGBackend(WebBackend):
    env_vars = (URL_ENV,)

    def __init__(self, env: Mapping[str, str], config: Mapping[str, Any] | None = None, *,
                 sleep: Callable[[float], None] = time.sleep):
        self.base_url = str(env.get(URL_ENV) or "").strip().rstrip("/")
        self.config = dict(config or {})
        self._sleep = sleep
        self._http: WebHTTP | None = None

    @property
    def name(self) -> str:
        return "searxng"

    def is_available(self) -> bool:
        return bool(self.base_url)

    def search(self, query: str, limit: int = 5, **options: Any) -> list[WebResult]:
        if not self.base_url:
            raise WebError(f"{URL_ENV} is not set; set it to your SearXNG instance's URL "
                           "(e.g. http://localhost:8888) in the environment or "
                           "$HERMES_HOME/.env", "missing_key")
        params = {"q": query, "format": "json", **search_params(options, self.config)}
        data = self._client().request_json("GET", "/search", params=params)
        if not isinstance(data, dict) or not isinstance(data.get("results"), list):
            raise WebError(f"SearXNG at {self.base_url} answered without a results list; is "
                           f"{URL_ENV} the instance's base URL?", "malformed")
        return [result for row in data["results"] if (result := to_result(row))][:max(limit, 0)]

    def get_config_schema(self) -> list[dict[str, Any]]:
        return [
            {"key": "url", "description": "base URL of your SearXNG instance", "secret": False,
             "required": True, "env_var": URL_ENV, "url": SETTINGS_URL},
            {"key": "language", "description": "default search language (e.g. en, all)",
             "default": None},
            {"key": "safesearch", "description": "default safe search: 0, 1 or 2",
             "default": None},
            {"key": "timeout", "description": "seconds to wait for an answer", "default": 15},
        ]

    def _client(self) -> WebHTTP:
        if self._http is None:
            self._http = WebHTTP(SERVICE, self.base_url, explain=explain, sleep=self._sleep,
                                 **http_options(self.config))
        return self._http

    def close(self) -> None:
        if self._http is not None:
            self._http.close()
            self._http = None


def search_params(options: Mapping[str, Any], config: Mapping[str, Any]) -> dict[str, Any]:
    """SearXNG's query parameters for the options (config supplies defaults)."""
    def option(key: str) -> Any:
        value = options.get(key)
        return config.get(key) if value is None else value

    params: dict[str, Any] = {}
    categories = option("categories")
    if categories:
        params["categories"] = ",".join(categories) if isinstance(categories, (list, tuple)) \
            else str(categories)
    if option("language"):
        params["language"] = str(option("language"))
    if option("pageno") is not None:
        params["pageno"] = max(1, int(option("pageno")))
    time_range = option("time_range")
    if time_range:
        if time_range not in TIME_RANGES:
            raise WebError(f"time_range must be one of {', '.join(TIME_RANGES)}, not "
                           f"{time_range!r}", "http")
        params["time_range"] = time_range
    safesearch = option("safesearch")
    if safesearch is not None:
        if str(safesearch) not in ("0", "1", "2"):
            raise WebError(f"safesearch must be 0 (off), 1 (moderate) or 2 (strict), not "
                           f"{safesearch!r}", "http")
        params["safesearch"] = int(safesearch)
    return params


def to_result(row: Any) -> WebResult | None:
    if not isinstance(row, dict) or not row.get("url"):
        return None
    engines = row.get("engines") if isinstance(row.get("engines"), list) else []
    engine = str(row.get("engine") or (engines[0] if engines else ""))
    return WebResult(title=str(row.get("title") or row["url"]), url=str(row["url"]),
                     snippet=" ".join(str(row.get("content") or "").split()),
                     published=str(row["publishedDate"]) if row.get("publishedDate") else None,
                     source=f"searxng/{engine}" if engine else "searxng")


def explain(status: int, body: Any, detail: str) -> WebError | None:
    """SearXNG answers 403 when the json format is off in its settings."""
    if status == 403:
        return WebError("SearXNG refused the JSON format (HTTP 403): enable it in the "
                        "instance's settings.yml with `search: formats: [html, json]` and "
                        f"restart SearXNG (see {SETTINGS_URL})", "http", status=403)
    return None


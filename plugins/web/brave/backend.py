"""The Brave Search backend: ``GET /res/v1/web/search`` with ``X-Subscription-Token``.

Options: ``offset`` (the page, 0 to 9, of ``count`` results), ``freshness`` (``pd``, ``pw``,
``pm``, ``py`` or ``YYYY-MM-DDtoYYYY-MM-DD``), ``country`` (two letters), ``search_lang``
and ``safesearch`` (``off``, ``moderate``, ``strict``). Brave returns at most 20 results a
call. An unknown token is answered 422 ``SUBSCRIPTION_TOKEN_INVALID``, not 401.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping
from typing import Any

from hermes_agent.api import (WebBackend, WebError, WebHTTP, WebResult, WebService,
                              http_options)

KEY_ENV, URL_ENV = "BRAVE_SEARCH_API_KEY", "BRAVE_SEARCH_BASE_URL"
KEY_URL = "https://api-dashboard.search.brave.com/app/keys"
DEFAULT_URL = "https://api.search.brave.com"
SERVICE = WebService("Brave Search", key_env=KEY_ENV, key_url=KEY_URL, url_env=URL_ENV)
MAX_COUNT, MAX_OFFSET = 20, 9
_FRESHNESS = re.compile(r"^(pd|pw|pm|py|\d{4}-\d{2}-\d{2}to\d{4}-\d{2}-\d{2})$")
_KEY_CODES = ("SUBSCRIPTION_TOKEN_INVALID", "SUBSCRIPTION_NOT_FOUND", "UNAUTHORIZED")


class BraveBackend(WebBackend):
    env_vars = (KEY_ENV, URL_ENV)

    def __init__(self, env: Mapping[str, str], config: Mapping[str, Any] | None = None, *,
                 sleep: Callable[[float], None] = time.sleep):
        self.api_key = str(env.get(KEY_ENV) or "").strip()
        self.base_url = str(env.get(URL_ENV) or DEFAULT_URL).strip().rstrip("/")
        self.config = dict(config or {})
        self._sleep = sleep
        self._http: WebHTTP | None = None

    @property
    def name(self) -> str:
        return "brave"

    def is_available(self) -> bool:
        return bool(self.api_key)

    def search(self, query: str, limit: int = 5, **options: Any) -> list[WebResult]:
        if not self.api_key:
            raise WebError(f"{KEY_ENV} is not set; get a key at {KEY_URL} and set it in the "
                           "environment or $HERMES_HOME/.env", "missing_key")
        count = min(max(int(limit), 1), MAX_COUNT)
        params = {"q": query, "count": count, **search_params(options, self.config)}
        data = self._client().request_json("GET", "/res/v1/web/search", params=params)
        if not isinstance(data, dict):
            raise WebError("Brave Search answered with something other than a search "
                           "response", "malformed")
        web = data.get("web")  # absent when nothing was found
        rows = web.get("results", []) if isinstance(web, dict) else []
        if not isinstance(rows, list):
            raise WebError("Brave Search's web.results is not a list", "malformed")
        return [result for row in rows if (result := to_result(row))][:max(limit, 0)]

    def get_config_schema(self) -> list[dict[str, Any]]:
        return [
            {"key": "api_key", "description": "Brave Search API subscription token",
             "secret": True, "required": True, "env_var": KEY_ENV, "url": KEY_URL},
            {"key": "country", "description": "default country of results (e.g. us, de)",
             "default": None},
            {"key": "safesearch", "description": "off, moderate or strict", "default": None},
            {"key": "timeout", "description": "seconds to wait for an answer", "default": 15},
        ]

    def _client(self) -> WebHTTP:
        if self._http is None:
            self._http = WebHTTP(SERVICE, self.base_url, secrets=(self.api_key,),
                                 headers={"X-Subscription-Token": self.api_key,
                                          "Accept-Encoding": "gzip"},
                                 explain=explain, sleep=self._sleep,
                                 **http_options(self.config))
        return self._http

    def close(self) -> None:
        if self._http is not None:
            self._http.close()
            self._http = None


def search_params(options: Mapping[str, Any], config: Mapping[str, Any]) -> dict[str, Any]:
    def option(key: str) -> Any:
        value = options.get(key)
        return config.get(key) if value is None else value

    params: dict[str, Any] = {}
    if option("offset") is not None:
        offset = int(option("offset"))
        if not 0 <= offset <= MAX_OFFSET:
            raise WebError(f"Brave Search's offset is a page number from 0 to {MAX_OFFSET}, "
                           f"not {offset}", "http")
        params["offset"] = offset
    freshness = option("freshness")
    if freshness:
        if not _FRESHNESS.match(str(freshness)):
            raise WebError("freshness must be pd, pw, pm, py (past day, week, month, year) "
                           f"or YYYY-MM-DDtoYYYY-MM-DD, not {freshness!r}", "http")
        params["freshness"] = str(freshness)
    for key in ("country", "search_lang", "safesearch"):
        if option(key):
            params[key] = str(option(key))
    return params


def to_result(row: Any) -> WebResult | None:
    if not isinstance(row, dict) or not row.get("url"):
        return None
    published = row.get("page_age") or row.get("age")
    return WebResult(title=str(row.get("title") or row["url"]), url=str(row["url"]),
                     snippet=_plain(str(row.get("description") or "")),
                     published=str(published) if published else None, source="brave")


def _plain(text: str) -> str:
    """Brave marks query words with <strong>; the snippet is plain text."""
    return " ".join(re.sub(r"</?strong>", "", text).split())


def explain(status: int, body: Any, detail: str) -> WebError | None:
    error = body.get("error") if isinstance(body, dict) else None
    code = str(error.get("code") or "") if isinstance(error, dict) else ""
    if status in (401, 403) or code in _KEY_CODES:
        return WebError(f"{KEY_ENV} was refused by Brave Search (HTTP {status}"
                        f"{', ' + code if code else ''}); check it at {KEY_URL} and update "
                        f"{KEY_ENV}", "missing_key", status=status)
    if code == "VALIDATION" and isinstance(error, dict):
        wrong = [f"{'.'.join(map(str, e.get('loc') or [])[-1:])}: {e.get('msg')}"
                 for e in (error.get("meta") or {}).get("errors") or [] if isinstance(e, dict)]
        return WebError(f"Brave Search rejected the request's parameters (HTTP {status}): "
                        f"{'; '.join(wrong) or detail}", "http", status=status)
    return None

"""Firecrawl as a :class:`WebBackend`: search through ``/search``, extraction through one
``/scrape`` per URL (a few at a time). The key and server are read from the environment at each
call, so a key added to ``$HERMES_HOME/.env`` works after the next reload."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from hermes_agent.api import WebBackend, WebError, WebPage, WebResult

from .client import KEY_URL, FirecrawlClient

DEFAULTS: dict[str, Any] = {"timeout": 60.0, "parallel": 3, "only_main_content": True}
SEARCH_OPTIONS = ("tbs", "location", "country", "sources", "scrapeOptions")  # passed through
# A page-level failure is that page's error; these stop the whole call (every page would fail).
CALL_FAILURES = ("missing_key", "rate_limited")


class FirecrawlBackend(WebBackend):
    """``settings``: ``plugins.entries.firecrawl`` (``timeout``, ``parallel``,
    ``only_main_content``); ``env``: returns the environment (the kernel's)."""

    env_vars = ("FIRECRAWL_API_KEY", "FIRECRAWL_API_URL")

    def __init__(self, settings: Mapping[str, Any] | None = None,
                 env: Callable[[], Mapping[str, str]] = dict, **client_options: Any):
        self.settings = {**DEFAULTS, **{k: v for k, v in (settings or {}).items()
                                        if k in DEFAULTS}}
        self._env = env
        self._client_options = client_options  # tests: retries, backoff, sleep

    @property
    def name(self) -> str:
        return "firecrawl"

    def is_available(self) -> bool:
        env = self._env()
        return bool(env.get("FIRECRAWL_API_KEY") or env.get("FIRECRAWL_API_URL"))

    def unavailable_reason(self) -> str:
        return "" if self.is_available() else (
            f"FIRECRAWL_API_KEY is not set; get a key at {KEY_URL} and set it in the "
            "environment or $HERMES_HOME/.env (a self-hosted server: set FIRECRAWL_API_URL)")

    def search(self, query: str, limit: int = 5, **options: Any) -> list[WebResult]:
        body: dict[str, Any] = {"query": query, "limit": max(1, min(int(limit), 100))}
        body.update({k: options[k] for k in SEARCH_OPTIONS if options.get(k) is not None})
        with self._client() as client:
            data = client.post("search", body).get("data")
        rows = data.get("web") if isinstance(data, dict) else data  # v2 | v1
        if not isinstance(rows, list):
            raise WebError("Firecrawl's search answer has no result list (data.web); check "
                           "that FIRECRAWL_API_URL points at a Firecrawl server", "malformed")
        return [WebResult(title=str(row.get("title") or ""), url=str(row["url"]),
                          snippet=str(row.get("description") or row.get("snippet") or ""),
                          published=row.get("date") or None, source=self.name)
                for row in rows if isinstance(row, dict) and row.get("url")][:limit]

    def extract(self, urls: list[str], **options: Any) -> list[WebPage]:
        if not urls:
            return []
        with self._client() as client:
            workers = max(1, min(int(self.settings["parallel"]), len(urls)))
            with ThreadPoolExecutor(workers, thread_name_prefix="firecrawl") as pool:
                results = list(pool.map(lambda url: self._scrape(client, url), urls))
        for result in results:  # a bad key or a rate limit fails the call, not one page
            if isinstance(result, WebError):
                raise result
        return results  # type: ignore[return-value]

    def _scrape(self, client: FirecrawlClient, url: str) -> WebPage | WebError:
        if not url.lower().startswith(("http://", "https://")):
            return WebPage(url, status="error", error=f"only http and https URLs are "
                                                      f"extracted, not {url!r}")
        body = {"url": url, "formats": ["markdown"],
                "onlyMainContent": bool(self.settings["only_main_content"])}
        try:
            data = client.post("scrape", body).get("data")
        except WebError as exc:
            if exc.kind in CALL_FAILURES or exc.status == 402:
                return exc
            return WebPage(url, status="error", error=str(exc))
        if not isinstance(data, dict):
            return WebPage(url, status="error", error="Firecrawl's scrape answer has no data; "
                           "try again, or check FIRECRAWL_API_URL")
        meta = data.get("metadata") if isinstance(data.get("metadata"), dict) else {}
        final = str(meta.get("url") or meta.get("sourceURL") or url)
        status = meta.get("statusCode")
        if isinstance(status, int) and status >= 400:
            return WebPage(final, status="error", error=f"{final} answered HTTP {status} to "
                           "Firecrawl; check the URL")
        if meta.get("error"):
            return WebPage(final, status="error", error=f"Firecrawl: {meta['error']}")
        markdown = str(data.get("markdown") or "").strip()
        if not markdown:
            return WebPage(final, status="error", error=f"Firecrawl found no content on {final}")
        return WebPage(final, str(meta.get("title") or meta.get("ogTitle") or ""), markdown)

    def _client(self) -> FirecrawlClient:
        env = self._env()
        key, url = env.get("FIRECRAWL_API_KEY", ""), env.get("FIRECRAWL_API_URL", "")
        if not key and not url:
            raise WebError("Firecrawl needs FIRECRAWL_API_KEY (get a key at "
                           f"{KEY_URL}); set it in the environment or in $HERMES_HOME/.env, "
                           "or FIRECRAWL_API_URL for a self-hosted server", "missing_key")
        return FirecrawlClient(api_key=key, api_url=url, timeout=float(self.settings["timeout"]),
                               **self._client_options)

    def get_config_schema(self) -> list[dict[str, Any]]:
        return [
            {"key": "api_key", "description": "Firecrawl API key", "secret": True,
             "required": True, "env_var": "FIRECRAWL_API_KEY", "url": KEY_URL},
            {"key": "api_url", "description": "a self-hosted Firecrawl server",
             "env_var": "FIRECRAWL_API_URL", "default": "https://api.firecrawl.dev"},
            {"key": "timeout", "description": "seconds for one request",
             "default": DEFAULTS["timeout"]},
            {"key": "parallel", "description": "pages scraped at once",
             "default": DEFAULTS["parallel"]},
            {"key": "only_main_content", "description": "drop headers, navigation, footers",
             "default": DEFAULTS["only_main_content"]},
        ]


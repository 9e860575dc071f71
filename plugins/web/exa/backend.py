"""The Exa backend: ``POST /search`` and ``POST /contents`` with ``x-api-key``.

Search options: ``type`` (``auto``, ``neural``, ``keyword``, ``fast``, ``deep``),
``contents`` (``highlights``, the default: the passages that match; ``text``: the page's
text; ``none``), ``category`` (``news``, ``research paper``, ...), ``include_domains`` /
``exclude_domains`` and ``start_published_date`` / ``end_published_date`` (ISO dates).
At most 100 results a call. Extract fetches each page's text through ``/contents``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from hermes_agent.api import (WebBackend, WebError, WebHTTP, WebPage, WebResult, WebService,
                              http_options)

KEY_ENV, URL_ENV = "EXA_API_KEY", "EXA_BASE_URL"
KEY_URL = "https://dashboard.exa.ai/api-keys"
DEFAULT_URL = "https://api.exa.ai"
SERVICE = WebService("Exa", key_env=KEY_ENV, key_url=KEY_URL, url_env=URL_ENV)
MAX_RESULTS = 100
SNIPPET_CHARS = 500
TYPES = ("auto", "neural", "keyword", "fast", "deep")
# our option -> Exa's camelCase field
FIELDS = {"category": "category", "include_domains": "includeDomains",
          "exclude_domains": "excludeDomains", "start_published_date": "startPublishedDate",
          "end_published_date": "endPublishedDate"}


class ExaBackend(WebBackend):
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
        return "exa"

    def is_available(self) -> bool:
        return bool(self.api_key)

    def search(self, query: str, limit: int = 5, **options: Any) -> list[WebResult]:
        def option(key: str, default: Any = None) -> Any:
            value = options.get(key)
            return self.config.get(key, default) if value is None else value

        kind = option("type", "auto")
        if kind not in TYPES:
            raise WebError(f"Exa's search type is one of {', '.join(TYPES)}, not {kind!r}",
                           "http")
        body: dict[str, Any] = {"query": query, "type": kind,
                                "numResults": min(max(int(limit), 1), MAX_RESULTS)}
        contents = option("contents", "highlights")
        if contents == "text":
            body["contents"] = {"text": {"maxCharacters": SNIPPET_CHARS * 4}}
        elif contents == "highlights":
            body["contents"] = {"highlights": {"maxCharacters": SNIPPET_CHARS}}
        elif contents != "none":
            raise WebError(f"contents is highlights, text or none, not {contents!r}", "http")
        body.update({wire: option(key) for key, wire in FIELDS.items()
                     if option(key) is not None})
        rows = self._call("/search", body).get("results")
        if not isinstance(rows, list):
            raise WebError("Exa's search answer has no results list", "malformed")
        return [result for row in rows if (result := to_result(row))][:max(limit, 0)]

    def extract(self, urls: list[str], **options: Any) -> list[WebPage]:
        if not urls:
            return []
        data = self._call("/contents", {"urls": list(urls), "text": True})
        found = {row.get("url"): row for row in data.get("results") or []
                 if isinstance(row, dict)}
        found.update({row.get("id"): row for row in found.copy().values() if row.get("id")})
        statuses = {row.get("id"): row for row in data.get("statuses") or []
                    if isinstance(row, dict)}
        pages = []
        for url in urls:
            row = found.get(url)
            if row is not None:
                pages.append(WebPage(url, str(row.get("title") or ""), str(row.get("text") or "")))
                continue
            error = (statuses.get(url) or {}).get("error") or {}
            reason = (f"{error.get('tag')} (HTTP {error.get('httpStatusCode')})"
                      if isinstance(error, dict) and error.get("tag")
                      else "Exa returned nothing for it")
            pages.append(WebPage(url, status="error", error=reason))
        return pages

    def get_config_schema(self) -> list[dict[str, Any]]:
        return [
            {"key": "api_key", "description": "Exa API key", "secret": True,
             "required": True, "env_var": KEY_ENV, "url": KEY_URL},
            {"key": "type", "description": "auto, neural, keyword, fast or deep",
             "default": "auto"},
            {"key": "contents", "description": "snippets from highlights, text or none",
             "default": "highlights"},
            {"key": "timeout", "description": "seconds to wait for an answer", "default": 15},
        ]

    def _call(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        if not self.api_key:
            raise WebError(f"{KEY_ENV} is not set; get a key at {KEY_URL} and set it in the "
                           "environment or $HERMES_HOME/.env", "missing_key")
        data = self._client().request_json("POST", path, json_body=body)
        if not isinstance(data, dict):
            raise WebError(f"Exa answered {path} with something other than an object",
                           "malformed")
        return data

    def _client(self) -> WebHTTP:
        if self._http is None:
            self._http = WebHTTP(SERVICE, self.base_url, secrets=(self.api_key,),
                                 headers={"x-api-key": self.api_key}, explain=explain,
                                 sleep=self._sleep, **http_options(self.config))
        return self._http

    def close(self) -> None:
        if self._http is not None:
            self._http.close()
            self._http = None


def to_result(row: Any) -> WebResult | None:
    if not isinstance(row, dict) or not row.get("url"):
        return None
    highlights = row.get("highlights") if isinstance(row.get("highlights"), list) else []
    snippet = " … ".join(str(h) for h in highlights) or str(row.get("text") or "")
    snippet = " ".join(snippet.split())
    if len(snippet) > SNIPPET_CHARS:
        snippet = snippet[:SNIPPET_CHARS].rsplit(" ", 1)[0] + " …"
    published = row.get("publishedDate")
    return WebResult(title=str(row.get("title") or row["url"]), url=str(row["url"]),
                     snippet=snippet, published=str(published) if published else None,
                     source="exa")


def explain(status: int, body: Any, detail: str) -> WebError | None:
    """Exa answers 402 when the account has no credits left."""
    if status == 402:
        return WebError(f"Exa refused the request: the account is out of credits (HTTP 402)"
                        f"{': ' + detail if detail else ''}; top it up at "
                        "https://dashboard.exa.ai", "rate_limited", status=402)
    return None

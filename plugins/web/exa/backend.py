"""The Exa backend: ``POST /search`` and ``POST /contents`` with ``x-api-key``.

Search options: ``type`` (``auto``, ``neural``, ``keyword``, ``fast``, ``deep``),
``contents`` (``highlights``, the default: the passages that match; ``text``: the page's
text; ``none``), ``category`` (``news``, ``research paper``, ...), ``include_domains`` /
``exclude_domains`` and ``start_published_date`` / ``end_published_date`` (ISO dates).
At most 100 results a call. Extract fetches each page's text through ``/contents``.
"""

from __future__ import annotations

from typing import Any

from hermes_agent.api import WebError, WebPage, WebResult
from hermes_agent.kits.http import HTTPWebBackend, WebService

KEY_ENV, URL_ENV = "EXA_API_KEY", "EXA_BASE_URL"
KEY_URL = "https://dashboard.exa.ai/api-keys"
MAX_RESULTS = 100
SNIPPET_CHARS = 500
TYPES = ("auto", "neural", "keyword", "fast", "deep")
# our option -> Exa's camelCase field
FIELDS = {"category": "category", "include_domains": "includeDomains",
          "exclude_domains": "excludeDomains", "start_published_date": "startPublishedDate",
          "end_published_date": "endPublishedDate"}


class ExaBackend(HTTPWebBackend):
    service = WebService("Exa", key_env=KEY_ENV, key_url=KEY_URL, url_env=URL_ENV)
    default_url = "https://api.exa.ai"
    name = "exa"

    def auth_headers(self) -> dict[str, str]:
        return {"x-api-key": self.api_key}

    def search(self, query: str, limit: int = 5, **options: Any) -> list[WebResult]:
        def option(key: str, default: Any = None) -> Any:
            return self.option(options, key, default)

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
        rows = self.call("POST", "/search", json_body=body).get("results")
        if not isinstance(rows, list):
            raise WebError("Exa's search answer has no results list", "malformed")
        return [result for row in rows if (result := to_result(row))][:max(limit, 0)]

    def extract(self, urls: list[str], **options: Any) -> list[WebPage]:
        if not urls:
            return []
        data = self.call("POST", "/contents", json_body={"urls": list(urls), "text": True})
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

    def explain(self, status: int, body: Any, detail: str) -> WebError | None:
        return out_of_credits(status, detail)


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


def out_of_credits(status: int, detail: str) -> WebError | None:
    """Exa answers 402 when the account has no credits left."""
    if status == 402:
        return WebError(f"Exa refused the request: the account is out of credits (HTTP 402)"
                        f"{': ' + detail if detail else ''}; top it up at "
                        "https://dashboard.exa.ai", "rate_limited", status=402)
    return None

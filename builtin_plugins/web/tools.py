"""The ``web_search`` and ``web_extract`` handlers: arguments checked, the cache asked,
the selected backend called under the rules of :mod:`.runner`, and the answer returned as a
JSON-string tool result (a failure as a ``tool_error`` naming its kind and the fix)."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from hermes_agent.api import (
    ToolCallContext, WebBackend, WebError, WebPage, WebResult, tool_error, tool_result,
)
from hermes_agent.kits.http import check_url

from .cache import SessionCache, normal_query, normal_url
from .content import (SEARCH_NOTICE, UNTRUSTED_NOTICE, condense, injection_findings,
                      injection_warning, wrap_untrusted)
from .failure import Failure
from .runner import run_selected
from .selection import candidates
from .settings import WebSettings, load_settings

if TYPE_CHECKING:
    from hermes_agent import Kernel


def turn_question(ctx: ToolCallContext) -> str:
    """The user's last message, when the running agent's history is known."""
    for message in reversed(ctx.history or []):
        if isinstance(message, dict) and message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, str):
                return content.strip()[:500]
    return ""


def search_rows(results: Any, limit: int, name: str) -> list[WebResult]:
    if not isinstance(results, list) or not all(isinstance(r, WebResult) for r in results):
        raise Failure(f"web backend {name!r} returned {type(results).__name__} instead of a "
                      "list of WebResult; a bug of the backend plugin.", "malformed", backend=name)
    return results[:limit]


class WebTools:
    """Both handlers over one kernel, sharing the per-session cache."""

    def __init__(self, kernel: Kernel):
        self.kernel = kernel
        self.cache = SessionCache()

    # --- web_search ---------------------------------------------------------------------
    def search(self, args: dict[str, Any], ctx: ToolCallContext) -> str:
        query = str(args.get("query") or "").strip()
        if not query:
            return tool_error("'query' is required: the words to search for.", kind="invalid")
        settings = load_settings(self.kernel)
        try:
            limit = max(1, min(int(args.get("limit") or 5), settings.max_results))
        except (TypeError, ValueError):
            return tool_error("'limit' must be a whole number, e.g. 5.", kind="invalid")
        try:
            primary = candidates(self.kernel, settings, "search")[0]
            key = (primary, "search", normal_query(query), limit)
            cached = self.cache.get(ctx.state_key, key)
            if cached is not None:
                return tool_result({**cached, "cached": True})
            name, results, tried = run_selected(
                self.kernel, settings, "search",
                lambda backend: search_rows(backend.search(query, limit), limit, backend.name),
                ctx.interrupt_event)
        except Failure as failure:
            return failure.result()
        texts = [f"{hit.title}\n{hit.snippet}" for hit in results]
        suspect = injection_findings(self.kernel, "\n\n".join(texts)) if texts else []
        rows = []
        for position, (hit, text) in enumerate(zip(results, texts), 1):
            row = {"title": hit.title, "url": hit.url, "description": hit.snippet,
                   "position": position, "published": hit.published, "source": hit.source or name}
            findings = injection_findings(self.kernel, text) if suspect else []
            if findings:  # only the results that hold the finding are flagged
                row["warning"] = injection_warning(findings)
            rows.append(row)
        answer: dict[str, Any] = {"success": True, "backend": name, "query": query,
                                  "data": {"web": rows}, "notice": SEARCH_NOTICE}
        if suspect and not any("warning" in row for row in rows):  # spread over results
            answer["warning"] = injection_warning(suspect)
        if tried:
            answer["fell_back_from"] = tried
        self.cache.put(ctx.state_key, key, answer, settings.cache_entries)
        return tool_result(answer)

    # --- web_extract --------------------------------------------------------------------
    def extract(self, args: dict[str, Any], ctx: ToolCallContext) -> str:
        raw = args.get("urls")
        urls = [raw] if isinstance(raw, str) else raw
        if not isinstance(urls, list) or not urls or not all(isinstance(u, str) for u in urls):
            return tool_error("'urls' must be a list of http(s) URLs, e.g. "
                              '["https://example.org/page"].', kind="invalid")
        settings = load_settings(self.kernel)
        urls = list(dict.fromkeys(u.strip() for u in urls if u.strip()))
        skipped = urls[settings.max_urls:]
        urls = urls[:settings.max_urls]
        query = str(args.get("query") or "").strip() or turn_question(ctx)
        try:
            primary = candidates(self.kernel, settings, "extract")[0]
        except Failure as failure:
            return failure.result()
        pages: dict[str, dict[str, Any]] = {}
        wanted: list[str] = []
        checks_deadline = time.monotonic() + settings.timeout  # the lookups, all URLs together
        for url in urls:
            try:
                check_url(url, allow_private=settings.allow_private_networks,
                          deadline=checks_deadline)
            except WebError as exc:
                pages[url] = {"url": url, "status": "error", "kind": exc.kind, "error": str(exc)}
                continue
            shown = self.cache.get(ctx.state_key, self._page_key(primary, url, query))
            raw = self.cache.get(ctx.state_key, self._page_key(primary, url))
            if shown is None and raw is not None:  # fetched before, asked with a new query
                shown = self._keep(primary, url, query, raw, settings, ctx)
            if shown is not None:
                pages[url] = {**shown, "cached": True}
            else:
                wanted.append(url)
        answer: dict[str, Any] = {"success": True, "backend": primary}
        if wanted:
            try:
                name, fetched, tried = run_selected(
                    self.kernel, settings, "extract",
                    lambda backend: self._fetch(backend, wanted, settings), ctx.interrupt_event)
            except Failure as failure:
                if not pages:
                    return failure.result()
                for url in wanted:
                    pages[url] = {"url": url, "status": "error", "kind": failure.kind,
                                  "error": failure.message}
            else:
                answer["backend"] = name
                if tried:
                    answer["fell_back_from"] = tried
                # long pages are summarised at once, each by its own model call
                with ThreadPoolExecutor(max_workers=len(wanted), thread_name_prefix="web") as pool:
                    shown = pool.map(lambda pair: self._keep(primary, pair[0], query, pair[1],
                                                             settings, ctx), zip(wanted, fetched))
                    pages.update(zip(wanted, shown))
        results = [pages[url] for url in urls]
        if not wanted and all(p.get("kind") in ("refused", "unreachable", "timeout")
                              for p in results):
            kind = results[0]["kind"]  # no URL passed the checks: nothing was fetched
            return tool_error("; ".join(p["error"] for p in results), kind=kind,
                              error_type=f"web_{kind}", results=results)
        answer.update(results=results, notice=UNTRUSTED_NOTICE)
        if skipped:
            answer["skipped"] = {"urls": skipped, "reason": f"at most {settings.max_urls} URLs "
                                 "per call (web.max_urls); ask again for the rest"}
        return tool_result(answer)

    @staticmethod
    def _page_key(backend: str, url: str, query: str | None = None) -> tuple[str, ...]:
        """The key of the page as shown for ``query``, or (None) of the page as fetched."""
        if query is None:
            return (backend, "page", normal_url(url))
        return (backend, "extract", normal_url(url), normal_query(query))

    def _keep(self, backend: str, url: str, query: str, page: WebPage, settings: WebSettings,
              ctx: ToolCallContext) -> dict[str, Any]:
        """``page`` as the model sees it, both cached when it was read."""
        shown = self._present(page, url, query, settings, ctx)
        if shown["status"] == "ok":
            self.cache.put(ctx.state_key, self._page_key(backend, url), page,
                           settings.cache_entries)
            self.cache.put(ctx.state_key, self._page_key(backend, url, query), shown,
                           settings.cache_entries)
        return shown

    @staticmethod
    def _fetch(backend: WebBackend, urls: list[str], settings: WebSettings) -> list[WebPage]:
        pages = backend.extract(list(urls), allow_private_networks=settings.allow_private_networks,
                                timeout=settings.timeout)
        if (not isinstance(pages, list) or len(pages) != len(urls)
                or not all(isinstance(p, WebPage) for p in pages)):
            raise Failure(f"web backend {backend.name!r} did not return one WebPage per URL "
                          f"({len(urls)} asked); a bug of the backend plugin.", "malformed",
                          backend=backend.name)
        return pages

    def _present(self, page: WebPage, url: str, query: str, settings: WebSettings,
                 ctx: ToolCallContext) -> dict[str, Any]:
        if page.status != "ok":
            return {"url": page.url or url, "status": "error",
                    "error": page.error or "the backend could not read this page"}
        short = condense(self.kernel, page.url or url, page.title, page.content, query,
                         settings.extract_char_limit, settings.summary_input_limit,
                         ctx.session_id, ctx.interrupt_event)
        row: dict[str, Any] = {"url": page.url or url, "title": page.title, "status": "ok",
                               "content": wrap_untrusted(short.text)}
        if short.note:
            row["note"] = short.note
        findings = injection_findings(self.kernel, f"{page.title}\n{short.text}")
        if findings:
            row["warning"] = injection_warning(findings)
        return row

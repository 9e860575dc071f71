"""A fake SearXNG instance: ``GET /search?q=...&format=json`` (no key). With
``json_enabled=False`` it answers 403 as a SearXNG whose settings.yml lacks ``json`` in
``search.formats`` does."""

from __future__ import annotations

from typing import Any

from .base import Document, FakeWebAPI, RecordedRequest

PAGE_SIZE = 10
_ENGINES = ("duckduckgo", "wikipedia", "brave")


class FakeSearXNG(FakeWebAPI):
    thread_name = "fake-searxng"

    def __init__(self, documents: list[Document] | None = None, *, json_enabled: bool = True):
        super().__init__(documents)
        self.json_enabled = json_enabled

    def refuse(self, request: RecordedRequest) -> tuple[int, Any] | None:
        if request.method != "GET" or request.path != "/search":
            return 404, {"error": f"no route {request.method} {request.path}"}
        if request.param("format") != "json" or not self.json_enabled:
            return 403, "403 Forbidden"  # SearXNG's plain answer for a disabled format
        if not (request.param("q") or "").strip():
            return 400, {"error": "search query is missing"}
        return None

    def answer(self, request: RecordedRequest) -> tuple[int, Any]:
        query = request.param("q") or ""
        page = int(request.param("pageno") or 1)
        found = self.find(query)[(page - 1) * PAGE_SIZE:page * PAGE_SIZE]
        results = []
        for rank, doc in enumerate(found):
            engine = _ENGINES[rank % len(_ENGINES)]
            results.append({"url": doc.url, "title": doc.title, "content": doc.content[:200],
                            "engine": engine, "engines": [engine, "startpage"],
                            "publishedDate": doc.published, "category":
                            request.param("categories") or "general",
                            "score": 1.0 / (rank + 1), "positions": [rank + 1]})
        return 200, {"query": query, "number_of_results": len(results), "results": results,
                     "answers": [], "corrections": [], "infoboxes": [], "suggestions": [],
                     "unresponsive_engines": []}

    def error_body(self, status: int, message: str) -> Any:
        return f"{status} {message}"

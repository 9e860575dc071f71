"""A fake Tavily API: ``POST /search`` and ``POST /extract`` with ``Authorization: Bearer``;
errors as ``{"detail": {"error": ...}}``."""

from __future__ import annotations

from typing import Any

from .base import Document, FakeWebAPI, RecordedRequest

MAX_RESULTS = 20


class FakeTavily(FakeWebAPI):
    thread_name = "fake-tavily"

    def __init__(self, documents: list[Document] | None = None, *, api_key: str):
        super().__init__(documents)
        self.api_key = api_key

    def error_body(self, status: int, message: str) -> Any:
        return {"detail": {"error": message}}

    def refuse(self, request: RecordedRequest) -> tuple[int, Any] | None:
        if request.method != "POST" or request.path not in ("/search", "/extract"):
            return 404, self.error_body(404, f"no route {request.method} {request.path}")
        if request.headers.get("authorization") != f"Bearer {self.api_key}":
            return 401, self.error_body(401, "Unauthorized: missing or invalid API key.")
        body = request.body if isinstance(request.body, dict) else {}
        if request.path == "/search":
            if not str(body.get("query") or "").strip():
                return 400, self.error_body(400, "Query is missing.")
            if not 0 <= int(body.get("max_results", 5)) <= MAX_RESULTS:
                return 400, self.error_body(400, f"max_results must be 0 to {MAX_RESULTS}.")
            if body.get("search_depth", "basic") not in ("basic", "advanced", "fast",
                                                         "ultra-fast"):
                return 400, self.error_body(400, "Invalid search depth.")
        elif not body.get("urls"):
            return 400, self.error_body(400, "urls is missing.")
        return None

    def answer(self, request: RecordedRequest) -> tuple[int, Any]:
        body: dict[str, Any] = request.body
        if request.path == "/extract":
            return 200, self._extract(body)
        found = self.find(str(body["query"]))[:int(body.get("max_results", 5))]
        news = body.get("topic") == "news"
        results = [{"title": d.title, "url": d.url, "content": d.content[:300],
                    "score": round(1.0 / (i + 1), 3), "raw_content": None,
                    **({"published_date": d.published} if news and d.published else {})}
                   for i, d in enumerate(found)]
        reply = {"query": body["query"], "follow_up_questions": None, "images": [],
                 "results": results, "response_time": 0.01}
        if body.get("include_answer"):
            reply["answer"] = found[0].content[:120] if found else ""
        return 200, reply

    def _extract(self, body: dict[str, Any]) -> dict[str, Any]:
        urls = body["urls"] if isinstance(body["urls"], list) else [body["urls"]]
        results, failed = [], []
        for url in urls:
            doc = self.document(url)
            if doc is None:
                failed.append({"url": url, "error": "Failed to fetch url"})
            else:
                results.append({"url": url, "raw_content": f"# {doc.title}\n\n{doc.content}",
                                "images": []})
        return {"results": results, "failed_results": failed, "response_time": 0.01}

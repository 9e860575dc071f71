"""A fake Exa API: ``POST /search`` and ``POST /contents`` with ``x-api-key``; errors as
``{"requestId": ..., "error": ..., "tag": ...}``."""

from __future__ import annotations

from typing import Any

from .base import Document, FakeWebAPI, RecordedRequest

MAX_RESULTS = 100
TYPES = ("auto", "neural", "keyword", "fast", "deep")


class FakeExa(FakeWebAPI):
    thread_name = "fake-exa"

    def __init__(self, documents: list[Document] | None = None, *, api_key: str):
        super().__init__(documents)
        self.api_key = api_key

    def error_body(self, status: int, message: str) -> Any:
        tag = {401: "INVALID_API_KEY", 429: "RATE_LIMIT_EXCEEDED"}.get(status, "INTERNAL_ERROR")
        return {"requestId": "fake-0", "error": message, "tag": tag}

    def refuse(self, request: RecordedRequest) -> tuple[int, Any] | None:
        if request.method != "POST" or request.path not in ("/search", "/contents"):
            return 404, self.error_body(404, f"no route {request.method} {request.path}")
        if request.headers.get("x-api-key") != self.api_key:
            return 401, self.error_body(401, "Invalid API key")
        body = request.body if isinstance(request.body, dict) else {}
        if request.path == "/search":
            if not str(body.get("query") or "").strip():
                return 400, self.error_body(400, "query: Required")
            if not 1 <= int(body.get("numResults", 10)) <= MAX_RESULTS:
                return 400, self.error_body(400, f"numResults must be 1 to {MAX_RESULTS}")
            if body.get("type", "auto") not in TYPES:
                return 400, self.error_body(400, f"type must be one of {', '.join(TYPES)}")
        elif not (body.get("urls") or body.get("ids")):
            return 400, self.error_body(400, "urls: Required")
        return None

    def answer(self, request: RecordedRequest) -> tuple[int, Any]:
        body: dict[str, Any] = request.body
        if request.path == "/contents":
            return 200, self._contents(body)
        found = self.find(str(body["query"]))[:int(body.get("numResults", 10))]
        contents = body.get("contents") or {}
        results = []
        for i, doc in enumerate(found):
            row: dict[str, Any] = {"id": doc.url, "title": doc.title, "url": doc.url,
                                   "publishedDate": f"{doc.published}T00:00:00.000Z"
                                   if doc.published else None,
                                   "author": None, "score": round(1.0 / (i + 1), 3)}
            if contents.get("text"):
                row["text"] = doc.content
            if contents.get("highlights"):
                row["highlights"] = [doc.content.split(". ")[0]]
                row["highlightScores"] = [0.5]
            results.append(row)
        return 200, {"requestId": "fake-1", "resolvedSearchType": body.get("type", "auto"),
                     "results": results, "costDollars": {"total": 0.005}}

    def _contents(self, body: dict[str, Any]) -> dict[str, Any]:
        results, statuses = [], []
        for url in body.get("urls") or body.get("ids"):
            doc = self.document(url)
            if doc is None:
                statuses.append({"id": url, "status": "error",
                                 "error": {"tag": "CRAWL_NOT_FOUND", "httpStatusCode": 404}})
            else:
                results.append({"id": url, "url": url, "title": doc.title,
                                "text": doc.content})
                statuses.append({"id": url, "status": "success"})
        return {"requestId": "fake-2", "results": results, "statuses": statuses}

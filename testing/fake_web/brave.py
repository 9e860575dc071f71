"""A fake Brave Search API: ``GET /res/v1/web/search`` with ``X-Subscription-Token``; errors
in Brave's ``{"type": "ErrorResponse", "error": {...}}`` shape (an unknown token is a 422
``SUBSCRIPTION_TOKEN_INVALID``, as Brave answers)."""

from __future__ import annotations

from typing import Any

from .base import Document, FakeWebAPI, RecordedRequest

PATH = "/res/v1/web/search"
MAX_COUNT, MAX_OFFSET = 20, 9


def brave_error(status: int, code: str, detail: str, meta: Any = None) -> dict[str, Any]:
    return {"type": "ErrorResponse",
            "error": {"id": "fake-0", "status": status, "code": code, "detail": detail,
                      "meta": meta or {}},
            "time": 0}


class FakeBrave(FakeWebAPI):
    thread_name = "fake-brave"

    def __init__(self, documents: list[Document] | None = None, *, api_key: str):
        super().__init__(documents)
        self.api_key = api_key

    def refuse(self, request: RecordedRequest) -> tuple[int, Any] | None:
        if request.method != "GET" or request.path != PATH:
            return 404, brave_error(404, "NOT_FOUND", f"no route {request.path}")
        if request.headers.get("x-subscription-token") != self.api_key:
            return 422, brave_error(422, "SUBSCRIPTION_TOKEN_INVALID",
                                    "The provided subscription token is invalid.")
        wrong = []
        if not (request.param("q") or "").strip():
            wrong.append(("q", "field required"))
        if not 1 <= int(request.param("count") or 20) <= MAX_COUNT:
            wrong.append(("count", f"ensure this value is between 1 and {MAX_COUNT}"))
        if not 0 <= int(request.param("offset") or 0) <= MAX_OFFSET:
            wrong.append(("offset", f"ensure this value is between 0 and {MAX_OFFSET}"))
        if wrong:
            errors = [{"loc": ["query", name], "msg": msg} for name, msg in wrong]
            return 422, brave_error(422, "VALIDATION", "Unable to validate request parameter(s)",
                                    {"errors": errors})
        return None

    def answer(self, request: RecordedRequest) -> tuple[int, Any]:
        count, offset = int(request.param("count") or 20), int(request.param("offset") or 0)
        query = request.param("q") or ""
        found = self.find(query)[offset * count:(offset + 1) * count]
        results = [{"type": "search_result", "title": d.title, "url": d.url,
                    "description": d.content[:200], "age": "3 days ago" if d.published else None,
                    "page_age": f"{d.published}T00:00:00" if d.published else None,
                    "language": "en", "family_friendly": True,
                    "profile": {"name": d.url.split("/")[2]}} for d in found]
        results = [{k: v for k, v in r.items() if v is not None} for r in results]
        return 200, {"type": "search", "query": {"original": query},
                     "web": {"type": "search", "results": results, "family_friendly": True}}

    def error_body(self, status: int, message: str) -> Any:
        code = "RATE_LIMITED" if status == 429 else "INTERNAL_ERROR"
        return brave_error(status, code, message)

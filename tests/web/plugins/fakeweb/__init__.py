"""Web backends for the tests, talking HTTP to the fake web server: ``fakesearch`` and
``paid`` (search and extract), ``locked`` (needs FAKE_KEY), ``searchonly``, ``broken`` (a
bug), ``offline`` (nothing listens) and ``original`` (written for the original: dicts)."""

import json
import urllib.error
import urllib.parse
import urllib.request

from hermes_agent.api import WebBackend, WebError, WebPage, WebResult


def get(url, timeout=10):
    try:
        with urllib.request.urlopen(url, timeout=timeout) as reply:
            return reply.read().decode("utf-8")
    except urllib.error.HTTPError as exc:
        if exc.code == 429:
            wait = exc.headers.get("Retry-After")
            raise WebError("rate limited by the fake web", "rate_limited",
                           retry_after=float(wait) if wait else None, status=429) from exc
        raise WebError(f"the fake web answered HTTP {exc.code}", "http", status=exc.code) from exc
    except urllib.error.URLError as exc:
        raise WebError(f"cannot reach {url}: {exc.reason}", "unreachable") from exc


class Fake(WebBackend):
    def __init__(self, name, base, kernel=None, key=""):
        self._name, self.base, self.kernel, self.key = name, base, kernel, key
        self.env_vars = (key,) if key else ()

    @property
    def name(self):
        return self._name

    def is_available(self):
        return not self.key or bool(self.kernel.env.get(self.key))

    def search(self, query, limit=5, **options):
        text = get(f"{self.base}/search?" + urllib.parse.urlencode(
            {"backend": self._name, "q": query, "limit": limit}))
        try:
            rows = json.loads(text)["results"]
        except (ValueError, KeyError, TypeError) as exc:
            raise WebError(f"{self._name}: the answer is not the expected JSON", "malformed") from exc
        return [WebResult(r["title"], r["url"], r["snippet"], source=self._name) for r in rows]

    def extract(self, urls, **options):
        pages = []
        for url in urls:
            try:
                text = get(url)
            except WebError as exc:
                pages.append(WebPage(url, status="error", error=str(exc)))
            else:
                pages.append(WebPage(url, text.splitlines()[0] if text else "", text))
        return pages


class SearchOnly(Fake):
    extract = WebBackend.extract


class Broken(Fake):
    def search(self, query, limit=5, **options):
        raise RuntimeError("the backend has a bug")


class Original:
    """A provider written for the original: dict results, async extract."""

    name = "original"

    def __init__(self, base):
        self.base = base

    def is_available(self):
        return True

    def supports_extract(self):
        return True

    def search(self, query, limit=5):
        try:
            rows = json.loads(get(f"{self.base}/search?" + urllib.parse.urlencode(
                {"backend": "original", "q": query, "limit": limit})))["results"]
        except WebError as exc:
            return {"success": False, "error": str(exc)}
        return {"success": True, "data": {"web": [
            {"title": r["title"], "url": r["url"], "description": r["snippet"], "position": i}
            for i, r in enumerate(rows, 1)]}}

    async def extract(self, urls, **kwargs):
        return [{"url": u, "title": "orig", "content": get(u)} for u in urls]


def register(ctx):
    base = str(ctx.config.get("url") or "http://127.0.0.1:1")
    kernel = ctx.kernel
    for backend in (Fake("fakesearch", base), Fake("paid", base),
                    Fake("locked", base, kernel, "FAKE_KEY"), SearchOnly("searchonly", base),
                    Broken("broken", base), Fake("offline", "http://127.0.0.1:1"),
                    Original(base)):
        ctx.register_web_search_provider(backend)

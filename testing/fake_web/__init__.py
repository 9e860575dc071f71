"""Fake web search APIs for tests: real HTTP on 127.0.0.1, each speaking one service's wire
format, checking its authentication and parameters, and failing on demand.

    from hermes_agent.testing.fake_web import FakeBrave

    def test_search():
        with FakeBrave(api_key="bsa-test") as brave:
            brave.add("Hermes", "https://hermes.example/", "a self-hosted agent runtime")
            brave.fail(429, retry_after="2")   # the next request gets 429, Retry-After: 2
            brave.hang(5)                       # the one after hangs for 5s
            brave.malformed()                   # the one after gets 200 and broken JSON
            brave.redirect("https://elsewhere.example/")  # and the next a 301
            ...  # point BRAVE_SEARCH_BASE_URL at brave.url
            assert brave.requests[-1].param("q") == "hermes"

``FakeSearXNG`` (no key; ``json_enabled=False`` answers 403 like a SearXNG without the json
format), ``FakeBrave``, ``FakeTavily`` (``/search`` and ``/extract``) and ``FakeExa``
(``/search`` and ``/contents``). ``serve_page(path, html)`` serves a page on the same port
for tests that extract what they found.
Also a web site (pages, redirects, huge, slow and binary bodies) and a resolver for made-up
host names (``FakePageServer``, ``FakeDNS``), the Firecrawl API
(``hermes_agent.testing.fake_web.firecrawl.FakeFirecrawlServer``) and DuckDuckGo behind a
TLS-terminating proxy, for the ddgs package (``hermes_agent.testing.fake_web.ddg.FakeDuckDuckGo``).
"""

from ..local_server import RecordedRequest
from .base import Document, FakeWebAPI
from .brave import FakeBrave
from .exa import FakeExa
from .searxng import FakeSearXNG
from .tavily import FakeTavily
from .dns import FakeDNS
from .pages import FakePageServer, PageRequest

__all__ = ["Document", "FakeWebAPI", "RecordedRequest", "FakeSearXNG", "FakeBrave",
           "FakeTavily", "FakeExa", "FakeDNS", "FakePageServer", "PageRequest"]

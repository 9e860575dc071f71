"""The firecrawl backend (``web.backend: firecrawl``), loaded as the bundled plugin of a real
kernel, against the fake Firecrawl API over HTTP: the request shapes of /v2 (and /v1), results
and pages, and every error shape as a WebError that says what to fix without the key."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_agent.api import WebError, WebPage, WebResult
from hermes_agent.testing import make_kernel
from hermes_agent.testing.fake_web.firecrawl import FakeFirecrawlServer

KEY = "fc-test-0123456789abcdef"


@pytest.fixture
def firecrawl() -> Iterator[FakeFirecrawlServer]:
    with FakeFirecrawlServer(api_key=KEY) as server:
        server.result("Green tea - Wikipedia", "https://en.wikipedia.org/wiki/Green_tea",
                      "Green tea is made from unoxidised leaves.")
        server.result("How to brew green tea", "https://tea.example/brew", "80°C, 2 minutes.")
        server.page("https://tea.example/brew", "# Brewing\n\nUse water at 80°C.",
                    title="How to brew green tea")
        yield server


def kernel_backend(home: Path, env: dict[str, str], **settings: Any) -> Any:
    kernel = make_kernel(home, builtins=True, env=env,
                         config={"plugins": {"entries": {"firecrawl": settings}}})
    return kernel, kernel.plugins["firecrawl"]


@pytest.fixture
def backend(home: Path, firecrawl: FakeFirecrawlServer) -> Any:
    kernel, status = kernel_backend(home, {"FIRECRAWL_API_KEY": KEY,
                                           "FIRECRAWL_API_URL": firecrawl.url}, timeout=2)
    assert status.state == "loaded", status
    return kernel.slots.get("web_search", "firecrawl")


def direct(firecrawl: FakeFirecrawlServer, url_suffix: str = "", **settings: Any) -> Any:
    """The backend built directly, to pass test-only client options (no real sleeps)."""
    cls = type(make_kernel(builtins=True, env={"FIRECRAWL_API_KEY": "x"})
               .slots.get("web_search", "firecrawl"))
    env = {"FIRECRAWL_API_KEY": KEY, "FIRECRAWL_API_URL": firecrawl.url + url_suffix}
    return cls(settings=settings, env=lambda: env, sleep=lambda seconds: None)


def error_of(call) -> WebError:  # type: ignore[no-untyped-def]
    with pytest.raises(WebError) as caught:
        call()
    assert KEY not in str(caught.value)
    return caught.value


def test_without_the_key_it_loads_unavailable_and_a_call_names_the_variable(home: Path) -> None:
    kernel, status = kernel_backend(home, {})
    assert status.state == "loaded"  # a bundled backend nobody chose is not a broken plugin
    backend = kernel.slots.get("web_search", "firecrawl")
    assert not backend.is_available()
    error = error_of(lambda: backend.search("tea"))
    assert error.kind == "missing_key" and "FIRECRAWL_API_KEY" in str(error)
    assert "https://www.firecrawl.dev/app/api-keys" in str(error)


def test_search_posts_v2_search_with_the_bearer_key(backend, firecrawl) -> None:
    assert backend.is_available() and backend.supports_search() and backend.supports_extract()
    results = backend.search("green tea", limit=1)
    assert results == [WebResult("Green tea - Wikipedia", "https://en.wikipedia.org/wiki/Green_tea",
                                 "Green tea is made from unoxidised leaves.", None, "firecrawl")]
    [request] = firecrawl.requests
    assert (request.path, request.body) == ("/v2/search", {"query": "green tea", "limit": 1})
    assert request.headers["authorization"] == f"Bearer {KEY}"
    backend.search("tea", limit=3, tbs="qdr:w", scrapeOptions={"formats": ["markdown"]},
                   ignored="x")
    assert firecrawl.requests[-1].body == {"query": "tea", "limit": 3, "tbs": "qdr:w",
                                           "scrapeOptions": {"formats": ["markdown"]}}


def test_a_v1_server_gets_v1_paths_and_its_answer_shape_is_read(firecrawl) -> None:
    results = direct(firecrawl, "/v1").search("green tea", limit=5)
    assert [r.url for r in results] == ["https://en.wikipedia.org/wiki/Green_tea",
                                        "https://tea.example/brew"]
    assert firecrawl.requests[-1].path == "/v1/search"


def test_extract_scrapes_each_url_as_markdown_in_order(backend, firecrawl) -> None:
    pages = backend.extract(["https://tea.example/brew", "https://tea.example/missing",
                             "file:///etc/passwd"])
    assert pages[0] == WebPage("https://tea.example/brew", "How to brew green tea",
                               "# Brewing\n\nUse water at 80°C.")
    assert pages[1].status == "error" and "answered HTTP 404" in pages[1].error
    assert pages[2].status == "error" and "only http and https" in pages[2].error
    scrapes = sorted((r.body["url"], r.path) for r in firecrawl.requests)
    assert scrapes == [("https://tea.example/brew", "/v2/scrape"),
                       ("https://tea.example/missing", "/v2/scrape")]
    assert all(r.body["formats"] == ["markdown"] and r.body["onlyMainContent"] is True
               for r in firecrawl.requests)


def test_extract_scrapes_a_few_pages_at_a_time(firecrawl) -> None:
    firecrawl.hang(0.2, times=6)
    backend = direct(firecrawl, parallel=2)
    pages = backend.extract([f"https://tea.example/p{i}" for i in range(6)])
    assert len(pages) == 6 and len(firecrawl.requests) == 6
    assert firecrawl.max_in_flight <= 2


def test_a_refused_key_says_where_to_check_it_and_never_shows_it(backend, firecrawl) -> None:
    firecrawl.fail(401, body={"success": False, "error": f"Unauthorized: Invalid token {KEY}"})
    error = error_of(lambda: backend.search("tea"))
    assert error.kind == "missing_key" and error.status == 401
    assert "check FIRECRAWL_API_KEY against the key that server expects" in str(error)
    assert "Invalid token ***" in str(error)


def test_payment_required_says_the_credits_ran_out(backend, firecrawl) -> None:
    firecrawl.fail(402, body={"success": False, "error": "Payment required"})
    error = error_of(lambda: backend.extract(["https://tea.example/brew"]))
    assert error.status == 402 and "out of credits" in str(error)


@pytest.mark.parametrize("header, wait", [("7", 7.0), (None, None)])
def test_a_rate_limit_carries_retry_after_and_fails_the_whole_extract(
        backend, firecrawl, header: str | None, wait: float | None) -> None:
    firecrawl.fail(429, retry_after=header)
    error = error_of(lambda: backend.extract(["https://tea.example/brew"]))
    assert (error.kind, error.retry_after) == ("rate_limited", wait)
    assert ("retry after 7s" if header else "wait a little") in str(error)
    assert len(firecrawl.requests) == 1  # not retried: the caller decides when


def test_a_server_error_is_retried_once(firecrawl) -> None:
    backend = direct(firecrawl)
    firecrawl.fail(503)
    assert len(backend.search("tea")) == 2 and len(firecrawl.requests) == 2
    firecrawl.fail(500, times=2)
    error = error_of(lambda: backend.search("tea"))
    assert error.kind == "unreachable" and "HTTP 500, a server-side error" in str(error)
    assert len(firecrawl.requests) == 4


def test_a_scrape_error_is_that_page_s_error(firecrawl) -> None:
    firecrawl.fail(500, times=2)
    brew, other = direct(firecrawl, parallel=1).extract(["https://tea.example/brew",
                                                        "https://tea.example/brew"])
    assert brew.status == "error" and "HTTP 500" in brew.error and other.status == "ok"


def test_a_hung_server_is_a_timeout(firecrawl) -> None:
    firecrawl.hang(5)
    error = error_of(lambda: direct(firecrawl, timeout=0.3).search("tea"))
    assert error.kind == "timeout" and "within 0.3s" in str(error)


def test_a_malformed_answer_says_to_check_the_server_url(backend, firecrawl) -> None:
    firecrawl.malformed()
    error = error_of(lambda: backend.search("tea"))
    assert error.kind == "malformed" and "FIRECRAWL_API_URL" in str(error)
    assert "502 Bad Gateway" in str(error)


def test_a_rejected_request_shows_the_server_s_reasons(backend) -> None:
    error = error_of(lambda: backend.search("   "))
    assert error.status == 400 and "query: Required" in str(error)


def test_an_unreachable_server_names_the_url_to_check(home: Path) -> None:
    kernel, _ = kernel_backend(home, {"FIRECRAWL_API_KEY": KEY,
                                      "FIRECRAWL_API_URL": "http://127.0.0.1:1"})
    backend = kernel.slots.get("web_search", "firecrawl")
    error = error_of(lambda: backend.search("tea"))
    assert error.kind == "unreachable" and "check FIRECRAWL_API_URL" in str(error)

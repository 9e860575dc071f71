"""The SearXNG backend against the fake SearXNG: the request, the results, its errors."""

from __future__ import annotations

import pytest

from hermes_agent.api import WebError, WebResult
from hermes_agent.testing.fake_web import FakeSearXNG

from .support import BY_NAME, seed

CASE = BY_NAME["searxng"]


def test_the_request_carries_the_query_json_format_and_options() -> None:
    with seed(FakeSearXNG()) as server:
        CASE.make(server).search("agent runtime", categories=["general", "news"],
                                 language="de-CH", pageno=2, time_range="week", safesearch=1)
        request = server.requests[-1]
    assert (request.method, request.path) == ("GET", "/search")
    assert {k: v[0] for k, v in request.query.items()} == {
        "q": "agent runtime", "format": "json", "categories": "general,news",
        "language": "de-CH", "pageno": "2", "time_range": "week", "safesearch": "1"}
    assert "authorization" not in request.headers


def test_settings_give_defaults_and_options_override_them() -> None:
    with seed(FakeSearXNG()) as server:
        backend = CASE.make(server, {"language": "fr", "safesearch": 2})
        backend.search("runtime")
        backend.search("runtime", language="en")
        first, second = server.requests
    assert first.param("language") == "fr" and first.param("safesearch") == "2"
    assert second.param("language") == "en"


def test_results_are_normalised_with_engine_and_date() -> None:
    with seed(FakeSearXNG()) as server:
        results = CASE.make(server).search("agent runtime")
    assert results[0] == WebResult(
        "Hermes agent runtime", "https://hermes.example/",
        "Hermes is a self-hosted agent runtime. Every capability is a plugin.",
        "2025-03-14", "searxng/duckduckgo")
    assert results[1].published is None and results[1].source == "searxng/wikipedia"


def test_a_trailing_slash_in_the_url_is_fine() -> None:
    with seed(FakeSearXNG()) as server:
        assert CASE.make(url=server.url + "/").search("runtime")
        assert server.requests[-1].path == "/search"


def test_json_format_disabled_says_how_to_enable_it() -> None:
    with seed(FakeSearXNG(json_enabled=False)) as server:
        with pytest.raises(WebError) as caught:
            CASE.make(server).search("runtime")
        assert len(server.requests) == 1  # a 403 is not retried
    message = str(caught.value)
    assert caught.value.status == 403 and "formats: [html, json]" in message
    assert "settings.yml" in message


def test_the_bot_limiter_hint_comes_with_a_429() -> None:
    with seed(FakeSearXNG()) as server:
        server.fail(429, times=3)
        with pytest.raises(WebError) as caught:
            CASE.make(server, {"max_retries": 2}).search("runtime")
    assert caught.value.kind == "rate_limited" and "limiter: false" in str(caught.value)


@pytest.mark.parametrize("options, complaint", [
    ({"time_range": "decade"}, "time_range must be one of day, week, month, year"),
    ({"safesearch": 5}, "safesearch is a whole number from 0 to 2, not 5"),
    ({"pageno": "two"}, "pageno is a whole number of at least 1, not 'two'"),
    ({"pageno": 0}, "pageno is a whole number of at least 1, not 0"),
])
def test_wrong_options_are_refused_before_any_request(options, complaint) -> None:
    with seed(FakeSearXNG()) as server:
        with pytest.raises(WebError, match=complaint.replace("(", r"\(").replace(")", r"\)")):
            CASE.make(server).search("runtime", **options)
        assert server.requests == []


def test_a_page_of_another_server_is_not_searxng() -> None:
    with FakeSearXNG() as server:
        server.malformed(raw=b'{"title": "not searxng"}')
        with pytest.raises(WebError) as caught:
            CASE.make(server).search("runtime")
    assert caught.value.kind == "malformed" and "SEARXNG_URL" in str(caught.value)


def test_searxng_does_not_extract() -> None:
    backend = CASE.backend({"SEARXNG_URL": "http://127.0.0.1:1"})
    assert not backend.supports_extract()
    with pytest.raises(WebError, match="set web.extract_backend"):
        backend.extract(["https://hermes.example/"])


def test_the_fake_serves_result_pages_for_extraction_tests() -> None:
    import httpx2

    with FakeSearXNG() as server:
        url = server.serve_page("/guides/tea.html", "<html><body><p>Steep it.</p></body></html>")
        server.add("Tea", url, "how to steep tea")
        server.fail(500)  # faults are for the API, never for the pages
        page = httpx2.get(url)
        (hit,) = CASE.make(server).search("steep tea")
        assert len(server.requests) == 2  # the page fetch is not recorded
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "Steep it." in page.text and hit.url == url

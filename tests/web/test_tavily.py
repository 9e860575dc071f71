"""The Tavily backend against the fake Tavily API: search and extract, and its errors."""

from __future__ import annotations

import pytest

from hermes_agent.api import WebError, WebPage, WebResult
from hermes_agent.testing.fake_web import FakeTavily

from .support import BY_NAME, KEY, seed

CASE = BY_NAME["tavily"]


def test_the_search_request_is_json_with_a_bearer_key() -> None:
    with seed(FakeTavily(api_key=KEY)) as server:
        CASE.make(server).search("agent runtime", limit=3, search_depth="advanced",
                                 topic="news", include_domains=["hermes.example"])
        request = server.requests[-1]
    assert (request.method, request.path) == ("POST", "/search")
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert request.body == {"query": "agent runtime", "max_results": 3,
                            "search_depth": "advanced", "topic": "news",
                            "include_domains": ["hermes.example"]}
    assert "api_key" not in request.body  # the key travels in the header only


def test_settings_give_defaults_and_max_results_is_capped() -> None:
    with seed(FakeTavily(api_key=KEY)) as server:
        CASE.make(server, {"search_depth": "advanced"}).search("runtime", limit=99)
        body = server.requests[-1].body
    assert body["search_depth"] == "advanced" and body["max_results"] == 20


def test_results_are_normalised_and_news_has_dates() -> None:
    with seed(FakeTavily(api_key=KEY)) as server:
        general = CASE.make(server).search("agent runtime")
        news = CASE.make(server).search("agent runtime", topic="news", include_answer=True)
    assert general[0] == WebResult(
        "Hermes agent runtime", "https://hermes.example/",
        "Hermes is a self-hosted agent runtime. Every capability is a plugin.", None, "tavily")
    assert news[0].published == "2025-03-14"


def test_a_wrong_parameter_shows_tavily_s_explanation() -> None:
    with seed(FakeTavily(api_key=KEY)) as server:
        with pytest.raises(WebError) as caught:
            CASE.make(server).search("runtime", search_depth="deepest")
    assert caught.value.status == 400 and "Invalid search depth" in str(caught.value)


def test_a_refused_key_says_where_to_check_it() -> None:
    with seed(FakeTavily(api_key=KEY)) as server:
        with pytest.raises(WebError) as caught:
            CASE.make(server, key="tvly-wrong-0123456789").search("runtime")
    message = str(caught.value)
    assert caught.value.kind == "missing_key" and caught.value.status == 401
    assert message.startswith("TAVILY_API_KEY was refused by Tavily (HTTP 401)")
    assert "https://app.tavily.com" in message and "tvly-wrong-0123456789" not in message


@pytest.mark.parametrize("status, which", [(432, "plan's credit limit"),
                                           (433, "pay-as-you-go spending limit")])
def test_the_account_limits_are_explained(status: int, which: str) -> None:
    with seed(FakeTavily(api_key=KEY)) as server:
        server.fail(status)
        with pytest.raises(WebError) as caught:
            CASE.make(server).search("runtime")
        assert len(server.requests) == 1
    assert caught.value.kind == "rate_limited" and which in str(caught.value)


def test_extract_returns_markdown_per_url_in_order() -> None:
    with seed(FakeTavily(api_key=KEY)) as server:
        pages = CASE.make(server).extract(["https://gone.example/", "https://hermes.example/"],
                                          extract_depth="advanced")
        request = server.requests[-1]
    assert (request.path, request.body) == ("/extract", {
        "urls": ["https://gone.example/", "https://hermes.example/"], "format": "markdown",
        "extract_depth": "advanced"})
    assert pages == [
        WebPage("https://gone.example/", status="error", error="Failed to fetch url"),
        WebPage("https://hermes.example/", "", "# Hermes agent runtime\n\nHermes is a "
                "self-hosted agent runtime. Every capability is a plugin.")]


def test_extract_of_nothing_asks_nothing_and_errors_are_web_errors() -> None:
    with seed(FakeTavily(api_key=KEY)) as server:
        backend = CASE.make(server)
        assert backend.supports_extract() and backend.extract([]) == []
        assert server.requests == []
        server.fail(500, times=3)
        with pytest.raises(WebError, match="Tavily failed \\(HTTP 500"):
            backend.extract(["https://hermes.example/"])

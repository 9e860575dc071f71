"""The Exa backend against the fake Exa API: search and contents, and its errors."""

from __future__ import annotations

import pytest

from hermes_agent.api import WebError, WebPage, WebResult
from hermes_agent.testing.fake_web import FakeExa

from .support import BY_NAME, KEY, seed

CASE = BY_NAME["exa"]


def test_the_search_request_uses_x_api_key_and_camel_case() -> None:
    with seed(FakeExa(api_key=KEY)) as server:
        CASE.make(server).search("agent runtime", limit=4, type="keyword",
                                 include_domains=["hermes.example"],
                                 start_published_date="2025-01-01")
        request = server.requests[-1]
    assert (request.method, request.path) == ("POST", "/search")
    assert request.headers["x-api-key"] == KEY and "authorization" not in request.headers
    assert request.body == {"query": "agent runtime", "type": "keyword", "numResults": 4,
                            "contents": {"highlights": {"maxCharacters": 500}},
                            "includeDomains": ["hermes.example"],
                            "startPublishedDate": "2025-01-01"}


def test_highlights_are_the_default_snippet() -> None:
    with seed(FakeExa(api_key=KEY)) as server:
        results = CASE.make(server).search("agent runtime")
    assert results[0] == WebResult("Hermes agent runtime", "https://hermes.example/",
                                   "Hermes is a self-hosted agent runtime",
                                   "2025-03-14T00:00:00.000Z", "exa")


def test_text_contents_make_a_shortened_snippet() -> None:
    with FakeExa(api_key=KEY) as server:
        server.add("Long", "https://long.example/", "word " * 400)
        (result,) = CASE.make(server).search("word", contents="text")
        assert server.requests[-1].body["contents"] == {"text": {"maxCharacters": 2000}}
    assert len(result.snippet) <= 502 and result.snippet.endswith(" …")


def test_no_contents_is_asked_for_with_none() -> None:
    with seed(FakeExa(api_key=KEY)) as server:
        (result, _) = CASE.make(server).search("agent runtime", contents="none")
        assert "contents" not in server.requests[-1].body
    assert result.snippet == ""


@pytest.mark.parametrize("options, complaint", [
    ({"type": "psychic"}, "search type is one of auto, neural, keyword, fast, deep"),
    ({"contents": "everything"}, "contents is highlights, text or none"),
])
def test_wrong_options_are_refused_before_any_request(options, complaint) -> None:
    with seed(FakeExa(api_key=KEY)) as server:
        with pytest.raises(WebError, match=complaint):
            CASE.make(server).search("runtime", **options)
        assert server.requests == []


def test_a_refused_key_says_where_to_check_it() -> None:
    with seed(FakeExa(api_key=KEY)) as server:
        with pytest.raises(WebError) as caught:
            CASE.make(server, key="exa-wrong-0123456789").search("runtime")
    message = str(caught.value)
    assert message.startswith("EXA_API_KEY was refused by Exa (HTTP 401): Invalid API key")
    assert "https://dashboard.exa.ai/api-keys" in message and caught.value.kind == "missing_key"


def test_no_credits_left_is_explained() -> None:
    with seed(FakeExa(api_key=KEY)) as server:
        server.fail(402, body={"requestId": "r", "error": "Insufficient credits"})
        with pytest.raises(WebError) as caught:
            CASE.make(server).search("runtime")
    assert "out of credits" in str(caught.value) and "Insufficient credits" in str(caught.value)


def test_extract_uses_contents_and_reports_each_failure() -> None:
    with seed(FakeExa(api_key=KEY)) as server:
        pages = CASE.make(server).extract(["https://hermes.example/", "https://gone.example/"])
        request = server.requests[-1]
    assert (request.path, request.body) == ("/contents", {
        "urls": ["https://hermes.example/", "https://gone.example/"], "text": True})
    assert pages == [
        WebPage("https://hermes.example/", "Hermes agent runtime",
                "Hermes is a self-hosted agent runtime. Every capability is a plugin."),
        WebPage("https://gone.example/", status="error", error="CRAWL_NOT_FOUND (HTTP 404)")]

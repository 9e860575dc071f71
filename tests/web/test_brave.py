"""The Brave Search backend against the fake Brave API: the request, the results, its errors."""

from __future__ import annotations

import pytest

from hermes_agent.api import WebError, WebResult
from hermes_agent.testing.fake_web import FakeBrave

from .support import BY_NAME, KEY, seed

CASE = BY_NAME["brave"]


def test_the_request_carries_the_token_and_parameters() -> None:
    with seed(FakeBrave(api_key=KEY)) as server:
        CASE.make(server).search("agent runtime", limit=7, offset=1, freshness="pw",
                                 country="de", safesearch="strict")
        request = server.requests[-1]
    assert (request.method, request.path) == ("GET", "/res/v1/web/search")
    assert request.headers["x-subscription-token"] == KEY
    assert request.headers["accept"] == "application/json"
    assert {k: v[0] for k, v in request.query.items()} == {
        "q": "agent runtime", "count": "7", "offset": "1", "freshness": "pw",
        "country": "de", "safesearch": "strict"}


def test_count_is_capped_at_brave_s_maximum() -> None:
    with seed(FakeBrave(api_key=KEY)) as server:
        CASE.make(server).search("runtime", limit=50)
        assert server.requests[-1].param("count") == "20"


def test_results_are_normalised_from_web_results() -> None:
    with seed(FakeBrave(api_key=KEY)) as server:
        results = CASE.make(server).search("agent runtime")
    assert results[0] == WebResult(
        "Hermes agent runtime", "https://hermes.example/",
        "Hermes is a self-hosted agent runtime. Every capability is a plugin.",
        "2025-03-14T00:00:00", "brave")
    assert results[1].published is None


def test_an_answer_without_web_results_is_no_results() -> None:
    with seed(FakeBrave(api_key=KEY)) as server:
        server.malformed(raw=b'{"type": "search", "query": {"original": "x"}}')
        assert CASE.make(server).search("x") == []


def test_highlighting_is_stripped_and_age_used_without_page_age() -> None:
    with FakeBrave(api_key=KEY) as server:
        server.malformed(raw=b'{"web": {"results": [{"title": "T", "url": "https://t.example",'
                             b' "description": "the <strong>agent</strong> runtime",'
                             b' "age": "2 days ago"}]}}')
        (result,) = CASE.make(server).search("agent")
    assert result.snippet == "the agent runtime" and result.published == "2 days ago"


def test_a_refused_token_says_which_variable_and_where_to_check() -> None:
    with seed(FakeBrave(api_key=KEY)) as server:
        with pytest.raises(WebError) as caught:
            CASE.make(server, key="bsa-wrong-0123456789").search("runtime")
        assert len(server.requests) == 1
    message = str(caught.value)
    assert caught.value.kind == "missing_key" and caught.value.status == 422
    assert message.startswith("BRAVE_SEARCH_API_KEY was refused by Brave Search")
    assert "https://api-dashboard.search.brave.com/app/keys" in message
    assert "bsa-wrong-0123456789" not in message


def test_a_401_is_a_refused_key_too() -> None:
    with seed(FakeBrave(api_key=KEY)) as server:
        server.fail(401)
        with pytest.raises(WebError, match="BRAVE_SEARCH_API_KEY was refused"):
            CASE.make(server).search("runtime")


def test_a_validation_error_names_the_parameter() -> None:
    with seed(FakeBrave(api_key=KEY)) as server:
        server.fail(422, body={"type": "ErrorResponse", "error": {
            "status": 422, "code": "VALIDATION", "detail": "Unable to validate request",
            "meta": {"errors": [{"loc": ["query", "country"], "msg": "unknown country"}]}}})
        with pytest.raises(WebError) as caught:
            CASE.make(server).search("runtime", country="xx")
    assert "country: unknown country" in str(caught.value) and caught.value.kind == "http"


def test_a_rate_limit_shows_brave_s_detail() -> None:
    with seed(FakeBrave(api_key=KEY)) as server:
        server.fail(429, retry_after="90")
        with pytest.raises(WebError) as caught:
            CASE.make(server).search("runtime")
    assert caught.value.retry_after == 90.0 and "injected by the fake server" in str(caught.value)


@pytest.mark.parametrize("options, complaint", [
    ({"offset": 10}, "offset is a whole number from 0 to 9, not 10"),
    ({"offset": 1.5}, "offset is a whole number from 0 to 9, not 1.5"),
    ({"freshness": "yesterday"}, "freshness must be pd, pw, pm, py"),
])
def test_wrong_options_are_refused_before_any_request(options, complaint) -> None:
    with seed(FakeBrave(api_key=KEY)) as server:
        with pytest.raises(WebError, match=complaint):
            CASE.make(server).search("runtime", **options)
        assert server.requests == []


def test_a_date_range_is_a_freshness() -> None:
    with seed(FakeBrave(api_key=KEY)) as server:
        CASE.make(server).search("runtime", freshness="2025-01-01to2025-06-30")
        assert server.requests[-1].param("freshness") == "2025-01-01to2025-06-30"

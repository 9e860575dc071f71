"""The ddgs backend (``web.backend: ddgs``): ddgs' rows as results and its exceptions as
WebErrors. No test reaches the network: a stand-in ``DDGS`` class is passed to the backend or
put in the package, and one test runs the real ``DDGS`` with its HTTP client failing
(test_ddgs_fake_server.py runs it against a fake DuckDuckGo)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from hermes_agent.api import WebError, WebResult
from hermes_agent.testing import make_kernel

ddgs = pytest.importorskip("ddgs", reason="the ddgs backend needs the ddgs package: "
                           "pip install 'hermes-agent-runtime[web-ddgs]'")
from ddgs.exceptions import DDGSException, RatelimitException, TimeoutException  # noqa: E402

ROWS = [{"title": "Green tea - Wikipedia", "href": "https://en.wikipedia.org/wiki/Green_tea",
         "body": "Green tea is a type of tea made from Camellia sinensis leaves."},
        {"title": "no link", "body": "a row without href is skipped"},
        "not a row",
        {"title": "How to brew", "href": "https://tea.example/brew", "body": None}]


class FakeDDGS:
    """Stands in for ``ddgs.DDGS``: records its construction and calls, answers ``rows`` or
    raises ``error``."""

    calls: list[dict[str, Any]] = []
    rows: Any = ROWS
    error: BaseException | None = None

    def __init__(self, proxy: str | None = None, timeout: int | None = 5,
                 verify: bool | str = True):
        self.client = {"proxy": proxy, "timeout": timeout, "verify": verify}

    def text(self, query: str, **kwargs: Any) -> Any:
        FakeDDGS.calls.append({"query": query, **self.client, **kwargs})
        if FakeDDGS.error is not None:
            raise FakeDDGS.error
        return FakeDDGS.rows


@pytest.fixture(autouse=True)
def _fresh_fake() -> None:
    FakeDDGS.calls, FakeDDGS.rows, FakeDDGS.error = [], ROWS, None


@pytest.fixture
def backend(home: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The bundled plugin's backend, with the package's DDGS class replaced."""
    monkeypatch.setattr(ddgs, "DDGS", FakeDDGS)
    kernel = make_kernel(home, builtins=True, config={"plugins": {"entries": {"ddgs": {
        "region": "uk-en", "timeout": 7}}}})
    return kernel.slots.get("web_search", "ddgs")


def test_rows_become_results_and_settings_reach_ddgs(backend) -> None:
    assert backend.name == "ddgs" and backend.is_available() and backend.env_vars == ()
    assert backend.supports_search() and not backend.supports_extract()
    assert backend.search("green tea", limit=3) == [
        WebResult("Green tea - Wikipedia", "https://en.wikipedia.org/wiki/Green_tea",
                  "Green tea is a type of tea made from Camellia sinensis leaves.", None, "ddgs"),
        WebResult("How to brew", "https://tea.example/brew", "", None, "ddgs")]
    assert FakeDDGS.calls == [{"query": "green tea", "proxy": None, "timeout": 7,
                               "verify": True, "max_results": 3,
                               "region": "uk-en", "safesearch": "moderate", "timelimit": None,
                               "backend": "auto"}]


def test_the_limit_is_kept_within_what_ddgs_serves(backend) -> None:
    backend.search("tea", limit=500)
    backend.search("tea", limit=0)
    assert [c["max_results"] for c in FakeDDGS.calls] == [50, 1]
    assert len(backend.search("tea", limit=1)) == 1


@pytest.mark.parametrize("error, kind, says", [
    (RatelimitException("https://duckduckgo.com/ 202 Ratelimit"), "rate_limited",
     "wait a minute"),
    (TimeoutException("https://duckduckgo.com/ timed out"), "timeout", "within 7s"),
    (DDGSException("ConnectError: connection refused"), "unreachable", "try again later")])
def test_ddgs_exceptions_become_web_errors_that_say_what_to_do(
        backend, error: BaseException, kind: str, says: str) -> None:
    FakeDDGS.error = error
    with pytest.raises(WebError) as caught:
        backend.search("tea")
    assert caught.value.kind == kind and says in str(caught.value)


def test_no_results_is_an_empty_list_and_a_strange_answer_is_malformed(backend) -> None:
    FakeDDGS.error = DDGSException("No results found.")
    assert backend.search("xqzzv tea") == []
    FakeDDGS.error, FakeDDGS.rows = None, {"results": []}
    with pytest.raises(WebError, match="not a list of results") as caught:
        backend.search("tea")
    assert caught.value.kind == "malformed"


def test_the_real_ddgs_timing_out_everywhere_is_a_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    """The real DDGS class runs its engines; their HTTP client times out (no network)."""
    from ddgs import http_client

    def timed_out(self: Any, *args: Any, **kwargs: Any) -> Any:
        raise TimeoutException("request timed out")

    monkeypatch.setattr(http_client.HttpClient, "request", timed_out)
    from hermes_agent.testing import make_kernel as build

    real = type(build(builtins=True).slots.get("web_search", "ddgs"))(settings={"timeout": 2})
    with pytest.raises(WebError) as caught:
        real.search("green tea")
    assert caught.value.kind == "timeout"


def test_without_the_package_it_is_unavailable_and_says_what_to_install(
        backend, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ddgs", None)
    assert not backend.is_available()
    with pytest.raises(WebError, match=r"pip install 'hermes-agent-runtime\[web-ddgs\]'"):
        backend.search("tea")

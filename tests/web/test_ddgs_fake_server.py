"""The ddgs backend against a fake DuckDuckGo: the real ``DDGS`` class and its HTTP client
(primp) search ``https://html.duckduckgo.com/html/`` over real TLS, through a proxy on
127.0.0.1 that answers that host itself and refuses every other one, so no test reaches the
network."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_agent.api import WebError, WebResult
from hermes_agent.testing import make_kernel
from hermes_agent.testing.fake_web.ddg import HOST, FakeDuckDuckGo
from hermes_agent.testing.fake_web.tls import openssl_available

from .conftest import call

pytest.importorskip("ddgs", reason="the ddgs backend needs the ddgs package: "
                    "pip install 'hermes-agent-runtime[web-ddgs]'")
pytestmark = pytest.mark.skipif(not openssl_available(), reason="the fake DuckDuckGo's TLS "
                                "certificate is made with the openssl command, not installed")

TIMEOUT = 1  # seconds: plugins.entries.ddgs.timeout


@pytest.fixture
def duckduckgo(tmp_path: Path) -> Iterator[FakeDuckDuckGo]:
    with FakeDuckDuckGo(tmp_path / "tls") as fake:
        fake.add("Green tea - Wikipedia", "https://en.wikipedia.org/wiki/Green_tea",
                 "Green tea is a type of tea made from Camellia sinensis leaves.")
        fake.add("How to brew green tea", "https://tea.example/brew?style=green&t=80",
                 "Brew green tea at 80 °C for two minutes.")
        fake.add("Black tea", "https://tea.example/black", "Fully oxidised leaves.")
        yield fake


def ddgs_kernel(home: Path, duckduckgo: FakeDuckDuckGo, engines: str = "duckduckgo") -> Any:
    """A kernel with the bundled plugins, ``web.backend: ddgs`` and the fake as its proxy."""
    return make_kernel(home, builtins=True, config={
        "web": {"backend": "ddgs"},
        "plugins": {"entries": {"ddgs": {
            "engines": engines, "region": "uk-en", "timeout": TIMEOUT,
            "proxy": duckduckgo.proxy_url, "ca_file": str(duckduckgo.ca_file)}}}})


@pytest.fixture
def backend(home: Path, duckduckgo: FakeDuckDuckGo) -> Any:
    return ddgs_kernel(home, duckduckgo).active_provider("web_search")


def test_results_come_from_the_fake_over_tls_and_the_request_carries_the_query(
        backend, duckduckgo: FakeDuckDuckGo) -> None:
    assert backend.name == "ddgs"
    assert backend.search("green tea", limit=5) == [
        WebResult("Green tea - Wikipedia", "https://en.wikipedia.org/wiki/Green_tea",
                  "Green tea is a type of tea made from Camellia sinensis leaves.", None, "ddgs"),
        WebResult("How to brew green tea", "https://tea.example/brew?style=green&t=80",
                  "Brew green tea at 80 °C for two minutes.", None, "ddgs")]
    [request] = duckduckgo.requests
    assert (request.method, request.path, request.headers["host"]) == ("POST", "/html/", HOST)
    assert request.form == {"q": "green tea", "b": "", "l": "uk-en"}
    assert duckduckgo.refused == []  # ddgs asked no other host


def test_the_web_search_tool_answers_from_the_fake(home: Path, duckduckgo: FakeDuckDuckGo) -> None:
    result = call(ddgs_kernel(home, duckduckgo), "web_search", query="black tea")
    assert result["success"] is True and result["backend"] == "ddgs"
    assert [(r["title"], r["url"]) for r in result["data"]["web"]] == [
        ("Black tea", "https://tea.example/black")]


def test_no_match_is_an_empty_list(backend, duckduckgo: FakeDuckDuckGo) -> None:
    assert backend.search("oolong") == []
    assert duckduckgo.requests[-1].form["q"] == "oolong"


@pytest.mark.xfail(strict=True, raises=AssertionError, reason=(
    "ddgs 9.16 drops a non-200 answer's status (BaseSearchEngine.request returns None) and "
    "raises DDGSException('No results found.'), which the backend must read as no results"))
@pytest.mark.parametrize("status, kind", [(202, "rate_limited"), (403, "rate_limited"),
                                          (500, "unreachable")])
def test_an_http_error_answer_is_a_web_error(
        backend, duckduckgo: FakeDuckDuckGo, status: int, kind: str) -> None:
    duckduckgo.fail(status)
    try:
        found = backend.search("green tea")
    except WebError as error:
        assert error.kind == kind
    else:
        raise AssertionError(f"HTTP {status} became {found!r}, not WebError(kind={kind!r})")


def test_a_hang_is_a_timeout_once_the_configured_timeout_passes(
        backend, duckduckgo: FakeDuckDuckGo) -> None:
    duckduckgo.hang(60)
    started = time.monotonic()
    with pytest.raises(WebError) as caught:
        backend.search("green tea")
    took = time.monotonic() - started
    assert caught.value.kind == "timeout" and f"within {TIMEOUT}s" in str(caught.value)
    assert TIMEOUT <= took < 10 * TIMEOUT  # ddgs gave up on its own, long before the fake
    assert duckduckgo.requests[-1].form["q"] == "green tea"  # the request got through


def test_any_other_host_is_refused_by_the_fake_and_is_unreachable(
        home: Path, duckduckgo: FakeDuckDuckGo) -> None:
    backend = ddgs_kernel(home, duckduckgo, engines="wikipedia").active_provider("web_search")
    with pytest.raises(WebError) as caught:
        backend.search("green tea")
    assert caught.value.kind == "unreachable"
    assert duckduckgo.refused == ["en.wikipedia.org:443"] and duckduckgo.requests == []

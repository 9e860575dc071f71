"""The local extractor (``web.extract_backend: local``), loaded as the bundled plugin of a real
kernel, extracting pages from a fake site over HTTP: clean markdown from realistic pages, the
SSRF rules from config.yaml, and one error page per page that cannot be read."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_agent.api import WebBackend, WebError, WebPage
from hermes_agent.testing import make_kernel
from hermes_agent.testing.fake_web import FakeDNS, FakePageServer

pytest.importorskip("trafilatura", reason="the local extractor needs trafilatura: "
                    "pip install 'hermes-agent-runtime[web-local]'")

PAGES = Path(__file__).parent / "pages"


def local_backend(home: Path, allow_private: bool = True, **settings: Any) -> WebBackend:
    kernel = make_kernel(home, builtins=True, config={
        "web": {"allow_private_networks": allow_private},
        "plugins": {"entries": {"web-local": settings}}})
    return kernel.slots.get("web_search", "local")


@pytest.fixture
def site() -> Iterator[FakePageServer]:
    with FakePageServer() as server:
        server.page("/news/thames", (PAGES / "news.html").read_bytes())
        server.page("/guide/retries.html", (PAGES / "docs.html").read_bytes())
        yield server


@pytest.fixture
def local(home: Path) -> WebBackend:
    return local_backend(home)


def test_it_registers_as_an_extract_only_backend_with_no_key(local) -> None:
    assert local.name == "local" and local.is_available() and local.env_vars == ()
    assert local.supports_extract() and not local.supports_search()
    with pytest.raises(WebError, match="web.search_backend") as caught:
        local.search("tea")
    assert caught.value.kind == "unsupported"


def test_a_news_page_keeps_the_article_and_drops_the_site_around_it(local, site) -> None:
    [page] = local.extract([site.url + "/news/thames"])
    assert page.status == "ok" and page.url == site.url + "/news/thames"
    assert page.title == "River Thames reaches record low after dry summer"
    text = page.content
    assert text.startswith("# River Thames reaches record low after dry summer")
    assert "## Hosepipe bans extended" in text and "## What happens next" in text
    assert "[drought status](https://www.example.gov/drought-status)" in text
    assert "- Thames Water: ban covers London and the Thames Valley" in text
    assert "| Teddington | 4.2 | 31.0 |" in text
    for chrome in ("cookies", "Subscribe today", "Advertisement", "Most read", "newsletter",
                   "All rights reserved", "About us", "gtag", "dataLayer"):
        assert chrome not in text, chrome


def test_a_docs_page_keeps_code_tables_and_resolves_relative_links(local, site) -> None:
    [page] = local.extract([site.url + "/guide/retries.html"])
    text = page.content
    assert page.title == "Configuring retries" and text.startswith("# Configuring retries")
    assert "client = Client(retry=RetryPolicy(attempts=3, backoff=0.5))" in text
    assert "| backoff | 0.5 | First wait in seconds, doubled each time |" in text
    assert f"[Timeouts]({site.url}/guide/timeouts.html)" in text  # relative to the page
    for chrome in ("Search the docs", "Installation", "Quickstart", "Built with Sphinx",
                   "DOCUMENTATION_OPTIONS"):
        assert chrome not in text, chrome


def test_plain_text_markdown_and_json_pass_through(local, site) -> None:
    site.page("/notes.txt", "Line one\nLine two\n", "text/plain; charset=utf-8")
    site.page("/readme.md", "# Title\n\nSome *markdown*.", "text/markdown")
    site.page("/data.json", '{"a": 1}', "application/json")
    pages = local.extract([site.url + "/notes.txt", site.url + "/readme.md",
                           site.url + "/data.json"])
    assert [p.content for p in pages] == ["Line one\nLine two", "# Title\n\nSome *markdown*.",
                                          '```json\n{"a": 1}\n```']


def test_each_unreadable_page_is_an_error_page_in_its_place(local, site) -> None:
    site.page("/paper.pdf", b"%PDF-1.7\n\x00\x01\x02", "application/pdf")
    site.page("/app", "<html><body><div id='root'></div><script>render()</script></body></html>")
    urls = [site.url + "/paper.pdf", site.url + "/news/thames", site.url + "/gone",
            site.url + "/app", "ftp://files.example/x"]
    pdf, news, gone, app, ftp = local.extract(urls)
    assert news.status == "ok"
    assert pdf == WebPage(urls[0], status="error", error=pdf.error)
    assert "is application/pdf, not a web page or text" in pdf.error
    assert gone.status == "error" and "answered HTTP 404" in gone.error
    assert app.status == "error" and "no readable text" in app.error
    assert ftp.status == "error" and "only http and https" in ftp.error


def test_private_addresses_are_refused_unless_config_allows_them(home: Path, site) -> None:
    refusing = local_backend(home, allow_private=False)
    [page] = refusing.extract([site.url + "/news/thames"])
    assert page.status == "error" and "web.allow_private_networks: true" in page.error
    assert site.requests == []


def test_a_redirect_into_the_private_network_is_an_error_page(site) -> None:

    site.redirect("/out", f"http://127.0.0.1:{site.port}/news/thames")
    backend = _plugin_class()(resolve=FakeDNS({"public.test": ["127.0.0.1"]}),
                              allowed_hosts={"public.test"})
    [page] = backend.extract([site.url_for("public.test", "/out")])
    assert page.status == "error" and "redirected to http://127.0.0.1" in page.error
    assert [r.path for r in site.requests] == ["/out"]


def test_the_size_cap_and_timeout_come_from_the_plugin_settings(home: Path, site) -> None:
    site.huge("/big", 3_000_000)
    site.stall("/stuck", seconds=30)
    backend = local_backend(home, max_bytes=1_000_000, timeout=0.5)
    big, stuck = backend.extract([site.url + "/big", site.url + "/stuck"])
    assert "larger than the 1,000,000-byte cap" in big.error
    assert "took longer than 0.5s" in stuck.error


def test_without_trafilatura_it_is_unavailable_and_says_what_to_install(
        local, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "trafilatura", None)
    assert not local.is_available()
    with pytest.raises(WebError, match=r"pip install 'hermes-agent-runtime\[web-local\]'"):
        local.extract(["https://example.com/"])


def _plugin_class() -> Any:
    """The plugin's LocalExtractor, built directly to pass the fetcher's test seams."""
    kernel = make_kernel(builtins=True)
    return type(kernel.slots.get("web_search", "local"))

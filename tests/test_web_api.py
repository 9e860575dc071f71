"""The web backends' contract: providers written for the original adapt to WebBackend."""

from __future__ import annotations

import pytest

from hermes_agent.api import WebBackend, WebError, WebPage, WebResult
from hermes_agent.kits.web_backends import as_web_backend


class Original:
    """The original's shape: dict results, async extract, {"success": False} on failure."""

    name = "orig"

    def __init__(self, fail: bool = False) -> None:
        self.fail = fail

    def is_available(self):
        return True

    def supports_extract(self):
        return True

    def search(self, query, limit=5):
        if self.fail:
            return {"success": False, "error": "quota exceeded"}
        return {"success": True, "data": {"web": [
            {"title": "A", "url": "https://a.example", "description": "about a", "position": 1},
            {"title": "no url"},
            {"title": "B", "url": "https://b.example", "description": "about b", "position": 2}]}}

    async def extract(self, urls, **kwargs):
        return [{"url": urls[0], "title": "A", "content": "# A", "raw_content": "<h1>A</h1>"},
                {"url": urls[1], "error": "404"}]


def test_the_original_shape_is_adapted() -> None:
    backend = as_web_backend(Original())
    assert isinstance(backend, WebBackend) and backend.name == "orig"
    assert backend.supports_search() and backend.supports_extract()
    assert backend.search("q", 5) == [
        WebResult("A", "https://a.example", "about a", None, "orig"),
        WebResult("B", "https://b.example", "about b", None, "orig")]
    assert backend.search("q", 1) == [WebResult("A", "https://a.example", "about a", None, "orig")]
    pages = backend.extract(["https://a.example", "https://b.example", "https://c.example"])
    assert pages == [WebPage("https://a.example", "A", "# A"),
                     WebPage("https://b.example", status="error", error="404"),
                     WebPage("https://c.example", status="error", error="no result from the backend")]


def test_a_failure_becomes_a_web_error() -> None:
    with pytest.raises(WebError, match="web backend 'orig' failed: quota exceeded"):
        as_web_backend(Original(fail=True)).search("q")


def test_a_backend_without_extract_says_which_key_to_change() -> None:
    class SearchOnly(WebBackend):
        name = "s"

        def is_available(self):
            return True

        def search(self, query, limit=5, **options):
            return []

    backend = SearchOnly()
    assert as_web_backend(backend) is backend
    assert backend.supports_search() and not backend.supports_extract()
    with pytest.raises(WebError, match="set web.extract_backend") as caught:
        backend.extract(["https://x.example"])
    assert caught.value.kind == "unsupported"


@pytest.mark.parametrize("url, reason", [
    ("file:///etc/passwd", "only http and https"),
    ("gopher://example.com/", "only http and https"),
    ("example.com/page", "without a scheme"),
    ("http://127.0.0.1:8080/admin", "private or local address (127.0.0.1)"),
    ("http://localhost/", "private or local address"),
    ("http://169.254.169.254/latest/meta-data/", "169.254.169.254"),
    ("http://[::1]/", "::1"),
    ("http://[::ffff:10.0.0.1]/", "private or local"),
    ("http://10.1.2.3/", "10.1.2.3"),
    ("http://100.64.0.1/", "100.64.0.1"),
    ("http://0.0.0.0/", "0.0.0.0"),
    ("http://2130706433/", "127.0.0.1"),  # the decimal form of 127.0.0.1
    ("http:///nohost", "has no host"),
])
def test_check_url_refuses(url: str, reason: str) -> None:
    from hermes_agent.kits.http import check_url

    with pytest.raises(WebError) as caught:
        check_url(url)
    assert reason in str(caught.value) and caught.value.kind == "refused"


def test_check_url_allows_private_when_asked_and_public_addresses() -> None:
    from hermes_agent.kits.http import check_url, is_public_address

    checked = check_url("http://127.0.0.1:8080/x", allow_private=True)
    assert (checked.host, checked.port, checked.addresses) == ("127.0.0.1", 8080, ("127.0.0.1",))
    assert check_url("https://93.184.215.14/").port == 443
    assert is_public_address("8.8.8.8") and not is_public_address("192.168.1.1")


@pytest.mark.parametrize("address, public", [
    ("2002:a00:1::", False),  # 6to4 of 10.0.0.1
    ("2002:7f00:1::1", False),  # 6to4 of 127.0.0.1
    ("2002:808:808::", True),  # 6to4 of 8.8.8.8
    ("2001:0:4136:e378:8000:63bf:3fff:fdd2", False),  # Teredo, client 192.0.2.45
    ("2001:0:808:808::3fff:fdd2", False),  # Teredo, server 8.8.8.8, client 192.0.2.45
    ("64:ff9b::a9fe:a9fe", False),  # NAT64 of 169.254.169.254
    ("64:ff9b::a00:1", False),  # NAT64 of 10.0.0.1
    ("64:ff9b::808:808", True),  # NAT64 of 8.8.8.8
    ("::ffff:169.254.169.254", False),
    ("168.63.129.16", False),  # Azure's wire server
    ("100.100.100.200", False),  # Alibaba's metadata server
    ("168.63.129.17", True),
])
def test_addresses_carrying_ipv4_are_judged_by_it(address: str, public: bool) -> None:
    from hermes_agent.kits.http import is_public_address

    assert is_public_address(address) is public


@pytest.mark.parametrize("host", ["[2002:a9fe:a9fe::]", "[64:ff9b::7f00:1]", "168.63.129.16",
                                  "100.100.100.200"])
def test_check_url_refuses_metadata_and_tunnelled_private_addresses(host: str) -> None:
    from hermes_agent.kits.http import check_url

    with pytest.raises(WebError) as caught:
        check_url(f"http://{host}/latest/meta-data")
    assert caught.value.kind == "refused" and "web.allow_private_networks" in str(caught.value)

"""The SSRF-safe fetcher over real HTTP(S) to a fake site on 127.0.0.1, tried as an attacker
would: private addresses, redirects into the private network, DNS answers that change, bodies
too big or too slow, binaries.

The site's made-up host names (``public.test``) reach 127.0.0.1 through a fake resolver and
``allowed_hosts``, as a public host would; everything else keeps the real rules."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from hermes_agent.api import WebError
from hermes_agent.kits.http import check_url, fetch
from hermes_agent.testing.fake_web import FakeDNS, FakePageServer
from hermes_agent.testing.fake_web.tls import make_tls, openssl_available

PUBLIC = "public.test"


@pytest.fixture
def site() -> Iterator[FakePageServer]:
    with FakePageServer() as server:
        server.page("/", "<html><title>Home</title><p>hello</p></html>")
        yield server


@pytest.fixture
def dns() -> FakeDNS:
    return FakeDNS({PUBLIC: ["127.0.0.1"]})


def get(site: FakePageServer, dns: FakeDNS, path: str, **options):  # type: ignore[no-untyped-def]
    return fetch(site.url_for(PUBLIC, path), resolve=dns, allowed_hosts={PUBLIC}, **options)


def refused(call, kind: str = "refused") -> str:  # type: ignore[no-untyped-def]
    with pytest.raises(WebError) as caught:
        call()
    assert caught.value.kind == kind, caught.value
    return str(caught.value)


def test_a_server_on_127_0_0_1_is_refused_unless_private_networks_are_allowed(site) -> None:
    message = refused(lambda: fetch(site.url + "/"))
    assert "127.0.0.1" in message and "web.allow_private_networks: true" in message
    assert site.requests == []  # refused before connecting
    page = fetch(site.url + "/", allow_private=True)
    assert (page.status, page.content_type, page.text) == (
        200, "text/html", "<html><title>Home</title><p>hello</p></html>")


@pytest.mark.parametrize("target", ["http://127.0.0.1:{port}/admin", "http://10.0.0.7/",
                                    "http://169.254.169.254/latest/meta-data/",
                                    "http://[::1]:{port}/", "http://internal.test:{port}/",
                                    "file:///etc/passwd"])
def test_a_redirect_from_an_allowed_host_into_the_private_network_is_refused(
        site, target: str) -> None:
    dns = FakeDNS({PUBLIC: ["127.0.0.1"], "internal.test": ["10.1.2.3"]})
    site.redirect("/go", target.format(port=site.port))
    message = refused(lambda: get(site, dns, "/go"))
    assert message.startswith(f"{site.url_for(PUBLIC, '/go')} redirected to ")
    assert [r.path for r in site.requests] == ["/go"]  # the private target was never asked


def test_redirects_are_followed_and_each_hop_is_checked(site, dns) -> None:
    site.redirect("/a", "/b", 301)
    site.redirect("/b", site.url_for(PUBLIC, "/"), 307)
    page = get(site, dns, "/a")
    assert page.url == site.url_for(PUBLIC, "/") and page.status == 200
    assert page.redirects == (site.url_for(PUBLIC, "/b"), site.url_for(PUBLIC, "/"))
    assert dns.calls == [PUBLIC] * 3


def test_a_redirect_loop_stops_at_max_redirects(site, dns) -> None:
    site.redirect("/loop", "/loop")
    message = refused(lambda: get(site, dns, "/loop", max_redirects=3), "http")
    assert "redirected more than 3 times" in message
    assert len(site.requests) == 4


def test_the_connection_is_pinned_to_the_checked_address(site) -> None:
    """DNS rebinding: the second answer is private. The fetch resolves once and connects to
    the first answer (public.test exists in no real DNS, so any other lookup would fail)."""
    rebinding = FakeDNS({PUBLIC: [["127.0.0.1"], ["10.9.9.9"]]})
    page = fetch(site.url_for(PUBLIC, "/"), resolve=rebinding, allowed_hosts={PUBLIC})
    assert page.status == 200 and rebinding.calls == [PUBLIC]
    assert site.requests[-1].headers["host"] == f"{PUBLIC}:{site.port}"


def test_a_host_with_any_private_answer_is_refused() -> None:
    mixed = FakeDNS({"mixed.test": ["93.184.215.14", "127.0.0.1"]})
    message = refused(lambda: check_url("http://mixed.test/", resolve=mixed))
    assert "(127.0.0.1)" in message


def test_an_address_literal_is_not_resolved() -> None:
    nothing = FakeDNS({})
    assert check_url("http://93.184.215.14/", resolve=nothing).addresses == ("93.184.215.14",)
    assert nothing.calls == []


def test_a_body_past_the_size_cap_is_not_read_to_the_end(site, dns) -> None:
    site.huge("/big", 50_000_000)
    message = refused(lambda: get(site, dns, "/big", max_bytes=1_000_000))
    assert "larger than the 1,000,000-byte cap" in message
    site.huge("/declared", 2_000_000, declare_length=True)
    assert "1,000,000-byte cap" in refused(lambda: get(site, dns, "/declared",
                                                       max_bytes=1_000_000))
    assert len(get(site, dns, "/declared", max_bytes=2_000_000).content) == 2_000_000


@pytest.mark.parametrize("route", ["slow", "stall"])
def test_the_whole_fetch_is_capped_in_time(site, dns, route: str) -> None:
    if route == "slow":  # a body that keeps coming, a piece at a time
        site.slow("/t", chunks=1000, delay=0.02)
    else:  # headers, then silence
        site.stall("/t", seconds=30)
    started = time.monotonic()
    message = refused(lambda: get(site, dns, "/t", timeout=0.5), "timeout")
    assert "took longer than 0.5s" in message
    assert time.monotonic() - started < 5


def test_binary_content_is_refused_before_its_body_is_read(site, dns) -> None:
    site.page("/doc.pdf", b"%PDF-1.7\n" + bytes(range(256)) * 100, "application/pdf")
    message = refused(lambda: get(site, dns, "/doc.pdf"), "unsupported")
    assert "is application/pdf, not a web page or text" in message
    assert get(site, dns, "/doc.pdf", text_only=False).content.startswith(b"%PDF-1.7")
    site.page("/blob", b"\x00\x01\x02binary", "")
    assert "binary content" in refused(lambda: get(site, dns, "/blob"), "unsupported")


def test_text_is_decoded_with_the_declared_charset(site, dns) -> None:
    site.page("/latin", "<p>café</p>".encode("latin-1"), "text/html; charset=ISO-8859-1")
    page = get(site, dns, "/latin")
    assert page.charset == "ISO-8859-1" and page.text == "<p>café</p>"


def test_errors_are_returned_with_their_status(site, dns) -> None:
    page = get(site, dns, "/missing")
    assert page.status == 404 and page.text == "not found"


def test_an_unknown_host_and_a_closed_port_are_unreachable() -> None:
    assert "cannot resolve 'nowhere.test'" in refused(
        lambda: fetch("http://nowhere.test/", resolve=FakeDNS({})), "unreachable")
    closed = FakeDNS({PUBLIC: ["127.0.0.1"]})
    assert "cannot connect to public.test" in refused(
        lambda: fetch(f"http://{PUBLIC}:1/", resolve=closed, allowed_hosts={PUBLIC}),
        "unreachable")


@pytest.mark.skipif(not openssl_available(), reason="the openssl command makes the test "
                    "certificates; install openssl to run the HTTPS tests")
def test_https_is_pinned_with_the_host_name_for_sni_and_certificate(tmp_path: Path) -> None:
    server_tls, client_tls = make_tls(tmp_path, [PUBLIC])
    dns = FakeDNS({PUBLIC: ["127.0.0.1"], "impostor.test": ["127.0.0.1"]})
    with FakePageServer(tls=server_tls) as site:
        site.page("/", "<p>secure</p>")
        page = fetch(site.url_for(PUBLIC), resolve=dns, allowed_hosts={PUBLIC},
                     verify=client_tls)
        assert page.text == "<p>secure</p>" and page.url.startswith("https://public.test:")
        # the same address under a name the certificate does not cover: refused by TLS
        message = refused(lambda: fetch(site.url_for("impostor.test"), resolve=dns,
                                        allowed_hosts={"impostor.test"}, verify=client_tls),
                          "unreachable")
        assert "certificate" in message and "impostor.test" in message

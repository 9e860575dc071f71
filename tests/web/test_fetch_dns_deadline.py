"""Host name lookups count against the fetch's deadline: an attacker whose DNS answers slowly
(for the first URL or for every host of a redirect chain) cannot keep a fetch past its
``timeout``, and lookups given up on (``getaddrinfo`` cannot be cancelled) are bounded by
``LOOKUPS``, not one more thread per fetch. Real HTTP on 127.0.0.1; the made-up names reach
it through resolver functions that answer after a delay, released at the end of each test so
no lookup outlives it. The same holds for the web backends' API calls (``WebHTTP``): a host
name is looked up within the connect timeout."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest

from hermes_agent.api import WebError
from hermes_agent.kits.http import WebHTTP, WebService, check_url, fetch, net
from hermes_agent.testing.fake_web import FakePageServer, FakeSearXNG

from .conftest import call
from .support import BY_NAME, Sleeps, seed

SEARXNG = BY_NAME["searxng"]

HOSTS = ("a.test", "b.test", "c.test", "d.test", "e.test")


class SlowDNS:
    """``resolve(host, port)``: ``127.0.0.1`` after ``delay`` seconds, or (``delay=None``)
    once :meth:`release` is called (at most ``cap`` seconds); records each call's thread."""

    def __init__(self, delay: float | None = None, slow: Any = None, cap: float = 10.0):
        self.delay, self.slow, self.cap = delay, slow, cap
        self.released = threading.Event()
        self.calls: list[str] = []
        self.threads: list[str] = []

    def __call__(self, host: str, port: int) -> list[str]:
        self.calls.append(host)
        self.threads.append(threading.current_thread().name)
        if self.slow is None or host in self.slow:
            if self.delay is None:
                self.released.wait(self.cap)
            else:
                self.released.wait(self.delay)  # a sleep the test can cut short
        return ["127.0.0.1"]

    def release(self) -> None:
        self.released.set()


@pytest.fixture
def site() -> Iterator[FakePageServer]:
    with FakePageServer() as server:
        yield server


@pytest.fixture(autouse=True)
def no_lookup_left() -> Iterator[None]:
    """Every test starts and ends with no lookup running (released lookups finish at once)."""
    _drained()
    yield
    _drained()


def _drained(within: float = 5.0) -> None:
    end = time.monotonic() + within
    while net.LOOKUPS.running and time.monotonic() < end:
        time.sleep(0.01)
    assert net.LOOKUPS.running == 0, f"{net.LOOKUPS.running} lookups still running"


def failure(call_: Any) -> tuple[WebError, float]:
    """The WebError ``call_()`` raises and the seconds it took."""
    started = time.monotonic()
    with pytest.raises(WebError) as caught:
        call_()
    return caught.value, time.monotonic() - started


def chain(site: FakePageServer, hosts: tuple[str, ...] = HOSTS) -> str:
    """``/hop0`` on the first host redirects to ``/hop1`` on the next, ..., then a page."""
    for n, host in enumerate(hosts[1:], 1):
        site.redirect(f"/hop{n - 1}", site.url_for(host, f"/hop{n}"))
    site.page(f"/hop{len(hosts) - 1}", "<html><body><p>the end</p></body></html>")
    return site.url_for(hosts[0], "/hop0")


def test_a_lookup_slower_than_the_timeout_fails_the_fetch_at_the_deadline(site) -> None:
    dns = SlowDNS()  # answers only when released: longer than any timeout here
    try:
        error, took = failure(lambda: fetch(site.url_for("slow.test", "/"), timeout=0.5,
                                            resolve=dns, allowed_hosts={"slow.test"}))
    finally:
        dns.release()
    assert error.kind == "timeout" and took < 0.5 + 1.5
    assert "took longer than 0.5s" in str(error) and "address of slow.test" in str(error)
    assert dns.threads == ["hermes-dns-lookup"] and site.requests == []


def test_a_slow_lookup_at_a_redirect_stops_at_the_fetch_deadline(site) -> None:
    dns = SlowDNS(slow={"b.test"})  # the first host answers at once, the redirect's never
    try:
        error, took = failure(lambda: fetch(chain(site, HOSTS[:2]), timeout=1.0, resolve=dns,
                                            allowed_hosts=set(HOSTS)))
    finally:
        dns.release()
    assert error.kind == "timeout" and took < 1.0 + 1.5
    assert "fetching http://b.test" in str(error) and "address of b.test" in str(error)
    assert dns.calls == ["a.test", "b.test"] and [r.path for r in site.requests] == ["/hop0"]


def test_a_chain_of_slow_lookups_shares_one_deadline(site) -> None:
    """Every lookup alone is well within the timeout; together they pass it, and the fetch
    stops at the deadline, not after the chain's last lookup."""
    dns = SlowDNS(delay=0.4)
    try:
        error, took = failure(lambda: fetch(chain(site), timeout=1.0, resolve=dns,
                                            allowed_hosts=set(HOSTS)))
    finally:
        dns.release()
    assert error.kind == "timeout" and took < 1.0 + 1.5
    assert len(dns.calls) < len(HOSTS) and len(site.requests) < len(HOSTS)


def test_a_fast_resolver_still_fetches_through_redirects(site) -> None:
    dns = SlowDNS(delay=0.02)
    page = fetch(chain(site, HOSTS[:3]), timeout=5, resolve=dns, allowed_hosts=set(HOSTS))
    assert page.status == 200 and "the end" in page.text
    assert page.redirects == (site.url_for("b.test", "/hop1"), site.url_for("c.test", "/hop2"))
    assert dns.calls == ["a.test", "b.test", "c.test"]
    assert set(dns.threads) == {"hermes-dns-lookup"}


def test_check_url_without_a_deadline_resolves_on_the_callers_thread() -> None:
    dns = SlowDNS(delay=0)
    assert check_url("http://a.test/", resolve=dns, allowed_hosts={"a.test"}).addresses == \
        ("127.0.0.1",)
    assert dns.threads == [threading.current_thread().name]
    slow = SlowDNS()
    try:
        error, took = failure(lambda: check_url("http://a.test/", resolve=slow,
                                                deadline=time.monotonic() + 0.3))
    finally:
        slow.release()
    assert error.kind == "timeout" and "address of a.test" in str(error) and took < 0.3 + 1.5


def test_a_resolver_error_reaches_the_caller_as_before() -> None:
    def broken(host: str, port: int) -> list[str]:
        raise OSError("no such host")

    error, _ = failure(lambda: fetch("http://gone.test/", resolve=broken, timeout=2))
    assert error.kind == "unreachable" and "cannot resolve 'gone.test'" in str(error)


def test_stalled_lookups_are_bounded_and_the_next_fails_at_once(site) -> None:
    """Lookups given up on keep their slot until their resolver returns: when all are taken,
    a fetch fails at once instead of starting one more thread or queueing; once they finish,
    fetching works again."""
    size = net.LOOKUPS.size
    stalled = SlowDNS()
    threads_before = threading.active_count()
    errors: list[WebError] = []

    def stalled_fetch(n: int) -> None:
        try:
            fetch(site.url_for(f"s{n}.test", "/"), timeout=0.5, resolve=stalled,
                  allowed_hosts={f"s{n}.test"})
        except WebError as exc:
            errors.append(exc)

    try:
        callers = [threading.Thread(target=stalled_fetch, args=(n,), daemon=True)
                   for n in range(size)]
        for caller in callers:
            caller.start()
        for caller in callers:
            caller.join(5)
        assert [e.kind for e in errors] == ["timeout"] * size  # given up on, still running
        assert net.LOOKUPS.running == size
        for _ in range(3 * size):  # many more: none waits, none starts a thread
            error, took = failure(lambda: fetch(site.url_for("more.test", "/"), timeout=5,
                                                resolve=stalled, allowed_hosts={"more.test"}))
            assert error.kind == "unreachable" and took < 1.0
        assert "host name lookups are still waiting for slow DNS servers" in str(error)
        lookups = [t for t in threading.enumerate() if t.name == "hermes-dns-lookup"]
        assert len(lookups) == size
        assert threading.active_count() <= threads_before + size
        assert len(stalled.calls) == size
    finally:
        stalled.release()
    _drained()  # the abandoned lookups finish and free their slots
    site.page("/", "<p>back</p>")
    page = fetch(site.url_for("back.test", "/"), timeout=5, resolve=SlowDNS(delay=0),
                 allowed_hosts={"back.test"})
    assert "back" in page.text


def test_web_extract_checks_urls_within_web_timeout(kernel_with, web,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The tool's own URL check resolves with the system resolver: a stalled lookup is an
    error row after ``web.timeout``, not a call that waits for the system's DNS timeouts."""
    stalled = SlowDNS()
    monkeypatch.setattr(net, "system_resolve", stalled)
    kernel = kernel_with({"backend": "fakesearch", "timeout": 0.5})
    started = time.monotonic()
    try:
        result = call(kernel, "web_extract", urls=["http://slow.test/page"])
    finally:
        stalled.release()
    assert time.monotonic() - started < 0.5 + 1.5
    assert result["kind"] == "timeout" and "address of slow.test" in result["error"]
    assert stalled.calls == ["slow.test"] and web.requests == []


# --- WebHTTP: the API calls of web backends to user-configured hosts ------------------------------

def search_failure(backend: Any, stalled: Any = None) -> tuple[WebError, float]:
    """The WebError ``backend.search`` raises and the seconds it took; then the ``stalled``
    lookups are released and the backend closed."""
    try:
        return failure(lambda: backend.search("runtime"))
    finally:
        if stalled is not None:
            stalled.release()
        backend.close()


class SlowGetaddrinfo:
    """``socket.getaddrinfo`` as a DNS server that does not answer makes it for ``name``: it
    returns (127.0.0.1's addresses) only once released, at most after ``cap`` seconds; other
    hosts are looked up as usual. Records the threads that looked ``name`` up."""

    def __init__(self, name: str, cap: float = 10.0):
        self.name, self.cap = name, cap
        self.real = socket.getaddrinfo
        self.released = threading.Event()
        self.threads: list[str] = []

    def __call__(self, host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if host == self.name:
            self.threads.append(threading.current_thread().name)
            self.released.wait(self.cap)
            host = "127.0.0.1"
        return self.real(host, port, *args, **kwargs)

    def release(self) -> None:
        self.released.set()


def test_a_backend_s_lookup_slower_than_its_connect_timeout_fails_the_call(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A SearXNG whose name the DNS servers never answer (the system resolver's own call
    stalls): the search fails at the connect timeout, naming the host being looked up."""
    stalled = SlowGetaddrinfo("searx.test")
    monkeypatch.setattr(socket, "getaddrinfo", stalled)
    with seed(FakeSearXNG()) as server:
        port = urlsplit(server.url).port
        backend = SEARXNG.make(url=f"http://searx.test:{port}",
                               config={"max_retries": 0, "connect_timeout": 0.5, "timeout": 10})
        error, took = search_failure(backend, stalled)
        assert server.requests == []
    assert error.kind == "timeout" and took < 0.5 + 1.5
    assert f"SearXNG at http://searx.test:{port} was not reached within 0.5s" in str(error)
    assert "looking up the address of searx.test did not finish in time" in str(error)
    assert stalled.threads == ["hermes-dns-lookup"]


def test_a_backend_retries_a_slow_lookup_and_each_try_ends_at_its_timeout(
        monkeypatch: pytest.MonkeyPatch) -> None:
    stalled = SlowDNS()
    monkeypatch.setattr(net, "system_resolve", stalled)
    sleeps = Sleeps()
    with seed(FakeSearXNG()) as server:
        port = urlsplit(server.url).port
        backend = SEARXNG.make(url=f"http://searx.test:{port}", sleeps=sleeps,
                               config={"max_retries": 2, "connect_timeout": 0.3})
        error, took = search_failure(backend, stalled)
    assert error.kind == "timeout" and "3 tries" in str(error) and took < 3 * 0.3 + 1.5
    assert stalled.calls == ["searx.test"] * 3 and len(sleeps.waits) == 2


def test_a_backend_behind_a_slow_resolving_proxy_fails_at_the_connect_timeout(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The proxy from the environment is connected to the same way: its name too."""
    stalled = SlowDNS()
    monkeypatch.setattr(net, "system_resolve", stalled)
    for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", "http://proxy.test:3128")
    backend = SEARXNG.make(url="http://searx.test:8888",
                           config={"max_retries": 0, "connect_timeout": 0.5})
    error, took = search_failure(backend, stalled)
    assert error.kind == "timeout" and took < 0.5 + 1.5
    assert "address of proxy.test" in str(error) and stalled.calls == ["proxy.test"]


def test_a_resolved_name_reaches_the_server_and_a_kept_connection_needs_no_lookup() -> None:
    dns = SlowDNS(delay=0.02)
    with seed(FakeSearXNG()) as server:
        port = urlsplit(server.url).port
        http = WebHTTP(WebService("SearXNG"), f"http://searx.test:{port}", resolve=dns)
        try:
            first = http.request_json("GET", "/search", params={"q": "runtime", "format": "json"})
            second = http.request_json("GET", "/search", params={"q": "pluggy", "format": "json"})
        finally:
            http.close()
        assert first["results"] and second["results"]
        assert [r.headers["host"] for r in server.requests] == [f"searx.test:{port}"] * 2
    assert dns.calls == ["searx.test"] and dns.threads == ["hermes-dns-lookup"]


def test_a_name_the_resolver_cannot_find_is_unreachable_naming_the_setting(
        monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(host: str, port: int) -> list[str]:
        raise OSError("no such host")

    monkeypatch.setattr(net, "system_resolve", broken)
    backend = SEARXNG.make(url="http://gone.test:8888", config={"max_retries": 0})
    error, _ = search_failure(backend)
    assert error.kind == "unreachable" and "cannot reach SearXNG at http://gone.test:8888" in \
        str(error)
    assert "cannot resolve 'gone.test' (no such host)" in str(error)
    assert "check SEARXNG_URL and the network" in str(error)

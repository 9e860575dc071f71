"""The fetcher and the backends' HTTP client attacked as a malicious page or server would:
every spelling of a local address, user-info tricks, redirects into the private network, a
gzip bomb, headers and bodies that trickle forever, an endless JSON answer. Real HTTP over
real sockets on 127.0.0.1; made-up public names reach it through a fake resolver and
``allowed_hosts``, as in test_fetch.py."""

from __future__ import annotations

import socket
import threading
import time
import tracemalloc
import zlib
from collections.abc import Callable, Iterator

import pytest

from hermes_agent.api import WebError
from hermes_agent.kits.http import WebHTTP, WebService, check_url, fetch, system_resolve
from hermes_agent.testing.fake_web import FakeDNS, FakePageServer

PUBLIC = "public.test"
Handler = Callable[[socket.socket], None]


class RawServer:
    """A TCP server on 127.0.0.1 whose handler writes whatever bytes it likes.

    Only the accepting thread closes the listening socket (:meth:`close` wakes it with a
    connection of its own): closed from another thread while the accepting one was about
    to call accept(), its descriptor number could be reused by a later test's server, whose
    connections this handler then answered (web_extract read "hi" in test_web_agent)."""

    def __init__(self, handler: Handler):
        self.handler = handler
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        self.closing = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        with self.sock:
            while True:
                try:
                    conn, _ = self.sock.accept()
                except OSError:
                    return
                if self.closing.is_set():  # close()'s wake-up call
                    conn.close()
                    return
                self.connections += 1
                threading.Thread(target=self._run, args=(conn,), daemon=True).start()

    def _run(self, conn: socket.socket) -> None:
        with conn:
            try:
                conn.recv(65536)
                self.handler(conn)
            except OSError:
                pass

    def close(self) -> None:
        self.closing.set()
        try:
            socket.create_connection(("127.0.0.1", self.port), timeout=5).close()
        except OSError:
            pass
        self.thread.join(5)


@pytest.fixture
def raw() -> Iterator[Callable[[Handler], RawServer]]:
    servers: list[RawServer] = []

    def start(handler: Handler) -> RawServer:
        servers.append(RawServer(handler))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


def refused(call: Callable[[], object], kind: str = "refused", within: float = 30.0) -> str:
    """The message of the WebError of kind ``kind`` that ``call`` raises; the test fails
    (instead of hanging) when the call is still running after ``within`` seconds."""
    box: dict[str, object] = {}

    def run() -> None:
        try:
            box["value"] = call()
        except BaseException as exc:  # noqa: BLE001  (judged below)
            box["error"] = exc

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(within)
    assert not worker.is_alive(), f"still running after {within}s"
    error = box.get("error")
    assert isinstance(error, WebError), box
    assert error.kind == kind, error
    return str(error)


LOCAL_SPELLINGS = ["127.0.0.1", "localhost", "LOCALHOST", "localhost.", "127.1", "0", "0.0.0.0",
                   "2130706433", "0x7f000001", "0x7f.1", "017700000001", "0177.0.0.1",
                   "[::1]", "[::]", "[::ffff:127.0.0.1]", "[::ffff:7f00:1]",
                   "[0:0:0:0:0:ffff:127.0.0.1]", "[::127.0.0.1]", "[64:ff9b::7f00:1]",
                   "[2002:7f00:1::]", "127\u30020\u30020\u30021", "169.254.169.254",
                   "[::ffff:a9fe:a9fe]", "100.100.100.200", "[fd00:ec2::254]", "10.0.0.1",
                   "172.16.0.1", "192.168.1.1", "[fe80::1%25eth0]", "224.0.0.1",
                   "255.255.255.255"]


@pytest.mark.parametrize("host", LOCAL_SPELLINGS)
def test_every_spelling_of_a_local_address_is_refused_before_connecting(
        host: str, raw: Callable[[Handler], RawServer]) -> None:
    server = raw(lambda conn: conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi"))
    url = f"http://{host}:{server.port}/"
    message = refused(lambda: fetch(url, timeout=3))
    assert "private or local address" in message and "allow_private_networks" in message
    assert server.connections == 0


@pytest.mark.parametrize("url", ["http://evil.test@127.0.0.1:{port}/",
                                 "http://127.0.0.1:{port}#@public.test/",
                                 "http://user:pw@localhost:{port}/",
                                 "HTTP://127.0.0.1:{port}/", " http://127.0.0.1:{port}/ "])
def test_user_info_and_fragments_do_not_hide_the_real_host(
        url: str, raw: Callable[[Handler], RawServer]) -> None:
    server = raw(lambda conn: conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi"))
    refused(lambda: fetch(url.format(port=server.port), timeout=3))
    assert server.connections == 0


@pytest.mark.parametrize("url", ["file:///etc/passwd", "gopher://127.0.0.1:70/_x",
                                 "ftp://public.test/", "//127.0.0.1/", "http:/127.0.0.1/",
                                 "javascript:alert(1)", "data:text/html,hi"])
def test_only_http_urls_with_a_host_are_fetched(url: str) -> None:
    refused(lambda: check_url(url, resolve=FakeDNS({})))


@pytest.mark.parametrize("target", ["http://2130706433:{port}/", "http://0x7f.1:{port}/",
                                    "http://[::ffff:127.0.0.1]:{port}/",
                                    "http://localhost:{port}/", "http://public.test@0:{port}/"])
def test_a_redirect_to_another_spelling_of_localhost_is_refused(target: str) -> None:
    def dns(host: str, port: int) -> list[str]:  # the made-up public name, else the system's
        return ["127.0.0.1"] if host == PUBLIC else system_resolve(host, port)

    with FakePageServer() as site:
        site.redirect("/go", target.format(port=site.port))
        message = refused(lambda: fetch(site.url_for(PUBLIC, "/go"), resolve=dns,
                                        allowed_hosts={PUBLIC}, timeout=5))
        assert "redirected to" in message and [r.path for r in site.requests] == ["/go"]


def test_a_gzip_bomb_is_stopped_at_the_cap_in_little_memory(
        raw: Callable[[Handler], RawServer]) -> None:
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    body = b"".join(packer.compress(b"\0" * 10_000_000) for _ in range(50)) + packer.flush()
    assert len(body) < 600_000  # half a gigabyte once inflated

    def bomb(conn: socket.socket) -> None:
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Encoding: gzip"
                     b"\r\nContent-Length: %d\r\n\r\n" % len(body) + body)

    server = raw(bomb)
    tracemalloc.start()
    try:
        message = refused(lambda: fetch(f"http://{PUBLIC}:{server.port}/", timeout=10,
                                        resolve=FakeDNS({PUBLIC: ["127.0.0.1"]}),
                                        allowed_hosts={PUBLIC}, max_bytes=1_000_000))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert "1,000,000-byte cap" in message
    assert peak < 64 << 20, f"peak {peak / 2**20:.0f} MiB"


def _trickle_headers(conn: socket.socket) -> None:
    conn.sendall(b"HTTP/1.1 200 OK\r\n")
    for n in range(10_000):
        conn.sendall(b"X-Slow-%d: y\r\n" % n)
        time.sleep(0.05)


def test_headers_that_trickle_forever_are_cut_at_the_deadline(
        raw: Callable[[Handler], RawServer]) -> None:
    server = raw(_trickle_headers)
    started = time.monotonic()
    refused(lambda: fetch(f"http://{PUBLIC}:{server.port}/", timeout=1.0,
                          resolve=FakeDNS({PUBLIC: ["127.0.0.1"]}), allowed_hosts={PUBLIC}),
            "timeout", within=5)
    assert time.monotonic() - started < 5


# --- the backends' JSON client (a SearXNG instance may be anyone's) --------------------------

def _client(port: int, **options: float) -> WebHTTP:
    return WebHTTP(WebService("SearXNG", url_env="SEARXNG_URL"), f"http://127.0.0.1:{port}",
                   max_retries=0, **options)  # type: ignore[arg-type]


def test_an_endless_json_answer_is_cut_at_the_size_cap(
        raw: Callable[[Handler], RawServer]) -> None:
    def endless(conn: socket.socket) -> None:
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n[")
        for _ in range(3000):  # 230 MB, where the cap is 32 MB
            conn.sendall(b'"0123456789abcdef",' * 4096)

    http = _client(raw(endless).port, timeout=20.0)
    tracemalloc.start()
    started = time.monotonic()
    try:
        message = refused(lambda: http.request_json("GET", "/search"), "malformed", within=15)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        http.close()
    assert "32,000,000 bytes" in message and "really a SearXNG API" in message
    assert peak < 100 << 20 and time.monotonic() - started < 15


def test_a_json_answer_that_trickles_forever_is_cut_at_the_timeout(
        raw: Callable[[Handler], RawServer]) -> None:
    def trickle(conn: socket.socket) -> None:
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n[")
        for _ in range(10_000):
            conn.sendall(b"1,")
            time.sleep(0.05)

    http = _client(raw(trickle).port, timeout=1.0)
    started = time.monotonic()
    try:
        message = refused(lambda: http.request_json("GET", "/search"), "timeout", within=4)
    finally:
        http.close()
    assert "did not answer within 1s" in message
    assert time.monotonic() - started < 4


def test_json_headers_that_trickle_forever_are_cut_at_the_timeout(
        raw: Callable[[Handler], RawServer]) -> None:
    http = _client(raw(_trickle_headers).port, timeout=1.0)
    started = time.monotonic()
    try:
        refused(lambda: http.request_json("GET", "/search"), "timeout", within=4)
    finally:
        http.close()
    assert time.monotonic() - started < 4

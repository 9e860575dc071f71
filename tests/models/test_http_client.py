"""The SDK clients share one TLS context per process, whose CA bundle loads at the first
TLS handshake and then verifies as the HTTP client's own would."""

from __future__ import annotations

import shutil
import ssl
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx2
import pytest
from openai._base_client import DefaultHttpxClient

from hermes_agent.builtin_plugins.models import nettrack


def test_clients_and_proxy_routes_share_one_tls_context(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")  # one more route, one more context
    first = nettrack.tracked_http_client(DefaultHttpxClient)
    second = nettrack.tracked_http_client(DefaultHttpxClient)
    try:
        shared = nettrack._shared_ssl_context()
        routes = [t for t in first._mounts.values() if t is not None]
        assert routes, "the proxy variable should give the client a proxy route"
        contexts = {id(t._pool._ssl_context) for t in (first._transport, second._transport, *routes)}
        assert contexts == {id(shared)}
        assert shared.verify_mode.name == "CERT_REQUIRED"  # still verifying certificates
    finally:
        first.close()
        second.close()


def _self_signed(directory: Path, name: str) -> tuple[Path, Path]:
    cert, key = directory / f"{name}.pem", directory / f"{name}.key"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2",
                    "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost",
                    "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True)
    return cert, key


class _Ok(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 (the handler's API)
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def tls_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, Path, Path]]:
    """An HTTPS server on 127.0.0.1 with a self-signed certificate for "localhost"; yields
    its port, its certificate and another, unrelated certificate."""
    if shutil.which("openssl") is None:
        pytest.skip("the openssl command is needed to make test certificates")
    directory = tmp_path_factory.mktemp("tls")
    cert, key = _self_signed(directory, "server")
    stranger, _ = _self_signed(directory, "stranger")
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Ok)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    try:
        yield server.server_address[1], cert, stranger
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def _get(url: str) -> int:
    client = nettrack.tracked_http_client(DefaultHttpxClient)
    try:
        return client.get(url).status_code
    finally:
        client.close()


def _fresh_context(monkeypatch: pytest.MonkeyPatch, cafile: Path) -> None:
    for name in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy", "SSL_CERT_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SSL_CERT_FILE", str(cafile))
    monkeypatch.setattr(nettrack, "_ssl_context", None)


def test_ca_bundle_loads_at_the_first_handshake_and_verifies(
        tls_server: tuple[int, Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    port, cert, _ = tls_server
    _fresh_context(monkeypatch, cert)
    context = nettrack._shared_ssl_context()
    assert context.cert_store_stats()["x509"] == 0  # nothing read while no TLS is needed
    assert _get(f"https://localhost:{port}/") == 200
    assert context.cert_store_stats()["x509"] == 1
    assert _get(f"https://localhost:{port}/") == 200  # loaded once, still verifying


def test_deferred_trust_still_rejects_untrusted_servers(
        tls_server: tuple[int, Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    port, cert, stranger = tls_server
    _fresh_context(monkeypatch, stranger)  # trust a certificate the server does not have
    with pytest.raises(httpx2.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
        _get(f"https://localhost:{port}/")
    _fresh_context(monkeypatch, cert)  # trusted, but not issued for this host name
    with pytest.raises(httpx2.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
        _get(f"https://127.0.0.1:{port}/")

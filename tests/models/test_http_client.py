"""The SDK clients share one TLS context per process (building one loads the CA bundle)."""

from __future__ import annotations

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

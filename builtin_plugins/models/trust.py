"""The process's TLS context for model calls, whose CA bundle loads at the first handshake.

Loading the CA bundle costs tens of milliseconds, and a call to a plain ``http://`` endpoint
(a local server) never needs it. :class:`DeferredTrustContext` verifies exactly like the
context the HTTP client would build (``CERT_REQUIRED``, host names checked, the same trust
source: ``SSL_CERT_FILE``, ``SSL_CERT_DIR`` or OpenSSL's compiled-in paths), but reads the
bundle when it first wraps a socket. Where the trust source is anything else (the system
store on Windows and macOS), the HTTP client's own context is built at once instead.
"""

from __future__ import annotations

import os
import ssl
import sys
import threading
from typing import Any


class DeferredTrustContext(ssl.SSLContext):
    """A verifying client context that loads its CA locations before the first handshake."""

    _trust: tuple[str | None, str | None]
    _trust_lock: threading.Lock

    def defer_trust(self, cafile: str | None, capath: str | None) -> None:
        self._trust = (cafile, capath)
        self._trust_lock = threading.Lock()

    def load_deferred_trust(self) -> None:
        with self._trust_lock:
            if self._trust != (None, None):
                self.load_verify_locations(*self._trust)
                self._trust = (None, None)

    def wrap_socket(self, *args: Any, **kwargs: Any) -> ssl.SSLSocket:  # type: ignore[override]
        self.load_deferred_trust()
        return super().wrap_socket(*args, **kwargs)

    def wrap_bio(self, *args: Any, **kwargs: Any) -> ssl.SSLObject:  # type: ignore[override]
        self.load_deferred_trust()
        return super().wrap_bio(*args, **kwargs)


def _trust_locations() -> tuple[str | None, str | None]:
    """Where the HTTP client's default context takes its CAs from; (None, None) when that
    is anything but these files and directories."""
    if cafile := os.environ.get("SSL_CERT_FILE"):
        return cafile, None
    if capath := os.environ.get("SSL_CERT_DIR"):
        return None, capath
    if sys.platform in ("win32", "darwin"):  # the system trust store
        return None, None
    paths = ssl.get_default_verify_paths()
    if not (paths.openssl_cafile and os.path.isfile(paths.openssl_cafile)):
        return None, None
    capath = paths.openssl_capath if os.path.isdir(paths.openssl_capath or "") else None
    return paths.openssl_cafile, capath


def verifying_context() -> ssl.SSLContext:
    """A new certificate-verifying client context; its CA bundle loads on first use when
    the trust source allows it."""
    cafile, capath = _trust_locations()
    if cafile is None and capath is None:
        from httpx2 import create_ssl_context

        return create_ssl_context(verify=True, trust_env=True)
    context = DeferredTrustContext(ssl.PROTOCOL_TLS_CLIENT)  # CERT_REQUIRED, host names checked
    context.defer_trust(cafile, capath)
    return context

"""Tracked network streams for the SDKs' HTTP clients, so a call can be interrupted.

:func:`tracked_http_client` builds the SDK's default ``httpx2`` client (same timeouts,
limits, keep-alive options and environment proxies) and wraps the network backend of each of
its connection pools. Every stream it opens reports its reads and writes to the
:class:`~.interrupt.CallGuard` of the calling thread (see :mod:`.interrupt`); without a guard
a read costs one thread-local lookup more.
"""

from __future__ import annotations

import logging
import socket
import time
from collections.abc import Iterable
from typing import Any

import httpcore2

from hermes_agent.kits.http import wrap_network_backends

from .interrupt import INTERRUPTED, POLL_SECONDS, CallGuard, _local

log = logging.getLogger("hermes_agent.models")
_client_classes: dict[type, type] = {}


def _check(guard: CallGuard) -> None:
    if guard.token.is_set():
        raise httpcore2.ReadError(INTERRUPTED)


class TrackedStream(httpcore2.NetworkStream):
    """A network stream that an interrupt can shut down from another thread."""

    def __init__(self, inner: Any):
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        guard = getattr(_local, "guard", None)
        if guard is None:
            return self._inner.read(max_bytes, timeout)
        guard.stream = self  # set before the check: an abort either sees it or we see the token
        _check(guard)
        if guard.polled:
            return self._polled_read(guard, max_bytes, timeout)
        return self._inner.read(max_bytes, timeout)

    def _polled_read(self, guard: CallGuard, max_bytes: int, timeout: float | None) -> bytes:
        """Read in short slices, checking a plain ``threading.Event`` between them."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            step = POLL_SECONDS
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise httpcore2.ReadTimeout("timed out")
                step = min(step, left)
            try:
                return self._inner.read(max_bytes, step)
            except httpcore2.ReadTimeout:
                _check(guard)

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        guard = getattr(_local, "guard", None)
        if guard is not None:
            guard.stream = self
            _check(guard)
        self._inner.write(buffer, timeout)

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None,
                  timeout: float | None = None) -> "TrackedStream":
        return TrackedStream(self._inner.start_tls(ssl_context, server_hostname, timeout))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)

    def abort(self) -> None:
        """Wake a read or write blocked on this stream (safe from any thread)."""
        sock = self._inner.get_extra_info("socket")
        if sock is None:
            self._inner.close()
            return
        try:  # the plain socket's shutdown, also for TLS sockets (theirs drops the SSL state)
            socket.socket.shutdown(sock, socket.SHUT_RDWR)
        except OSError:  # already closed or never connected
            pass


class TrackingBackend(httpcore2.NetworkBackend):
    """Wraps a connection pool's network backend so its streams are tracked."""

    def __init__(self, inner: Any):
        self._inner = inner

    def _opened(self, stream: Any) -> TrackedStream:
        tracked = TrackedStream(stream)
        guard = getattr(_local, "guard", None)
        if guard is not None:
            guard.stream = tracked
            if guard.token.is_set():  # interrupted while connecting
                stream.close()
                raise httpcore2.ConnectError(INTERRUPTED)
        return tracked

    def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                    local_address: str | None = None,
                    socket_options: Iterable[Any] | None = None) -> TrackedStream:
        return self._opened(self._inner.connect_tcp(host, port, timeout, local_address,
                                                    socket_options))

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Iterable[Any] | None = None) -> TrackedStream:
        return self._opened(self._inner.connect_unix_socket(path, timeout, socket_options))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


def install(http_client: Any) -> int:
    """Track the streams of every connection pool of an ``httpx2.Client`` (its default
    transport and its proxy mounts). Returns how many pools are tracked."""
    tracked = wrap_network_backends(http_client, lambda backend: backend if isinstance(
        backend, TrackingBackend) else TrackingBackend(backend))
    if not tracked:
        log.warning("model calls cannot be interrupted mid-request: this httpx2 version has "
                    "no connection pool to track (interrupts wait for the request to end)")
    return tracked


def tracked_http_client(default_client: type) -> Any:
    """An instance of the SDK's ``DefaultHttpxClient`` with tracked streams, closed when it is
    garbage-collected (as the SDK's own default client is)."""
    cls = _client_classes.get(default_client)
    if cls is None:
        cls = _client_classes[default_client] = type(
            f"Tracked{default_client.__name__.lstrip('_')}", (default_client,), {"__del__": _close_quietly})
    client = cls(verify=_shared_ssl_context())
    install(client)
    return client


_ssl_context: Any = None


def _shared_ssl_context() -> Any:
    """One verifying TLS context per process, trusting what the HTTP client would trust
    (SSL_CERT_FILE, SSL_CERT_DIR or the system's CA bundle), shared by every client and proxy
    route. Its CA bundle, which costs tens of milliseconds, loads at the first TLS handshake
    (see :mod:`.trust`), so calls to a plain-http local server never pay for it."""
    global _ssl_context
    if _ssl_context is None:
        from .trust import verifying_context

        _ssl_context = verifying_context()
    return _ssl_context


def _close_quietly(client: Any) -> None:
    try:
        if not client.is_closed:
            client.close()
    except Exception:
        pass

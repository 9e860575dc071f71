"""Owner: the builtin plugin `web`.

Network guards for fetching what the model asks for (SSRF): only http(s) URLs, and only
public addresses unless the user allowed private networks (``web.allow_private_networks``).

:func:`check_url` resolves the host and checks every address it resolves to; a fetcher
then connects to one of the returned addresses (pinned), so a second DNS answer cannot
swap in a private one, and checks again on every redirect.

Given a ``deadline``, :func:`check_url` (through :func:`resolve_host`, which the connections
of :class:`~.client.WebHTTP` use too) waits for the resolver only until then: the lookup
runs on a daemon thread of a small bounded set (:class:`LookupPool`; ``getaddrinfo`` cannot
be cancelled, so a lookup given up on finishes on its own), and when every slot is taken by
lookups still running, the next one fails at once instead of queueing.
"""

from __future__ import annotations

import ipaddress
import socket
import threading
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from hermes_agent.api import WebError

__all__ = ["CheckedURL", "check_url", "is_public_address", "LookupPool", "LOOKUPS", "Resolver",
           "resolve_host", "system_resolve"]

#: ``resolve(host, port)`` -> the host's addresses (the seam for a test's or a user's own DNS)
Resolver = Callable[[str, int], Sequence[str]]

# Ranges never fetched without web.allow_private_networks, beyond what ipaddress calls
# private/loopback/link-local/reserved: carrier-grade NAT (Alibaba's metadata server
# 100.100.100.200 is in it), IETF protocol assignments, AWS's IPv6 metadata block and
# Azure's wire server.
_EXTRA_BLOCKED = (ipaddress.ip_network("100.64.0.0/10"), ipaddress.ip_network("192.0.0.0/24"),
                  ipaddress.ip_network("fd00:ec2::/32"), ipaddress.ip_network("168.63.129.16/32"),
                  ipaddress.ip_network("100.100.100.200/32"))
_NAT64 = ipaddress.ip_network("64:ff9b::/96")  # the well-known prefix: IPv4 in the last 32 bits


@dataclass(frozen=True)
class CheckedURL:
    """A URL that passed the checks, and the addresses its host resolved to (connect to
    one of these, never resolve again)."""

    url: str
    scheme: str
    host: str
    port: int
    addresses: tuple[str, ...]


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    """The IPv4 addresses an IPv6 address carries (mapped, 6to4, Teredo server and client,
    NAT64): the traffic reaches those, so they are the ones checked."""
    if ip.ipv4_mapped is not None:
        return [ip.ipv4_mapped]
    if ip.sixtofour is not None:
        return [ip.sixtofour]
    if ip.teredo is not None:
        return list(ip.teredo)
    if ip in _NAT64:
        return [ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)]
    return []


def is_public_address(address: str) -> bool:
    ip = ipaddress.ip_address(address)
    if isinstance(ip, ipaddress.IPv6Address):
        embedded = _embedded_ipv4(ip)
        if embedded:  # decided by where the traffic goes
            return all(is_public_address(str(v4)) for v4 in embedded)
    if (ip.is_private or ip.is_loopback or ip.is_link_local or ip.is_multicast
            or ip.is_reserved or ip.is_unspecified):
        return False
    return not any(ip in net for net in _EXTRA_BLOCKED if net.version == ip.version)


def system_resolve(host: str, port: int) -> list[str]:
    """The addresses the system resolver gives for ``host``, in its order, without repeats."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]).split("%")[0] for info in infos))


class LookupPool:
    """Host name lookups on daemon threads, at most ``size`` running at once.

    A lookup the caller stopped waiting for keeps its slot until the resolver returns (the
    system's own DNS timeouts), so lookups stalled by slow DNS servers cannot pile up past
    ``size`` threads; while all slots are taken, :meth:`resolve` fails at once (kind
    ``unreachable``). Each lookup has its own result: nothing from a lookup given up on
    reaches a later one."""

    def __init__(self, size: int = 16):
        self.size = size
        self._slots = threading.BoundedSemaphore(size)
        self._lock = threading.Lock()
        self._running = 0

    @property
    def running(self) -> int:
        """Lookups whose resolver has not returned yet (abandoned ones included)."""
        return self._running

    def resolve(self, resolve: Resolver, host: str, port: int, deadline: float) -> list[str]:
        """``resolve(host, port)``, waited for until ``deadline`` (``time.monotonic()``);
        :class:`WebError` kind ``timeout`` when it has not answered by then."""
        if deadline - time.monotonic() <= 0:
            raise _lookup_timed_out(host)
        if not self._slots.acquire(blocking=False):
            raise WebError(f"cannot look up {host!r} now: {self.size} host name lookups are "
                           "still waiting for slow DNS servers; try again later",
                           "unreachable")
        box: dict[str, Any] = {}
        done = threading.Event()

        def run() -> None:
            try:
                box["value"] = list(resolve(host, port))
            except BaseException as exc:  # noqa: BLE001  (handed to the waiting caller)
                box["error"] = exc
            finally:
                with self._lock:
                    self._running -= 1
                self._slots.release()
                done.set()

        with self._lock:
            self._running += 1
        try:
            threading.Thread(target=run, name="hermes-dns-lookup", daemon=True).start()
        except RuntimeError as exc:  # the system refused another thread
            with self._lock:
                self._running -= 1
            self._slots.release()
            raise WebError(f"cannot look up {host!r} now ({exc}); try again later",
                           "unreachable") from exc
        if not done.wait(max(0.0, deadline - time.monotonic())):
            raise _lookup_timed_out(host)
        if "error" in box:
            raise box["error"]
        return box["value"]  # type: ignore[no-any-return]


#: the lookups of every :func:`resolve_host` given a deadline (:func:`check_url`'s: the
#: fetcher's and the web tools'; :class:`~.client.WebHTTP`'s connections)
LOOKUPS = LookupPool()


def _lookup_timed_out(host: str) -> WebError:
    return WebError(f"looking up the address of {host} did not finish in time (its DNS "
                    "servers are slow or not answering); try again later", "timeout")


def check_url(url: str, *, allow_private: bool = False, allowed_hosts: Collection[str] = (),
              resolve: Resolver | None = None, deadline: float | None = None) -> CheckedURL:
    """Check ``url`` before fetching it; :class:`WebError` (kind ``refused``) says why not.

    ``allowed_hosts``: host names (lower-case, as in the URL) whose private addresses are
    accepted even without ``allow_private``, e.g. one intranet server. ``resolve`` replaces
    the system resolver. ``deadline`` (a ``time.monotonic()`` time): the resolver is waited
    for only until then, on a thread of :data:`LOOKUPS` (kind ``timeout`` past it, kind
    ``unreachable`` when too many lookups are still running); without it, the resolver is
    called directly and takes as long as it takes."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError as exc:
        raise WebError(f"{url!r} is not a valid URL ({exc})", "refused") from exc
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        what = f"{scheme}:" if scheme else "a URL without a scheme"
        raise WebError(f"only http and https URLs are fetched, not {what} ({url!r})", "refused")
    host = (parts.hostname or "").rstrip(".")
    if not host:
        raise WebError(f"{url!r} has no host", "refused")
    port = port or (443 if scheme == "https" else 80)
    addresses = resolve_host(host, port, resolve=resolve, deadline=deadline)
    if not allow_private and host not in allowed_hosts:
        blocked = [a for a in addresses if not is_public_address(a)]
        if blocked:
            raise WebError(f"{host} resolves to a private or local address ({', '.join(blocked)});"
                           " fetching it is refused. If you meant to, set "
                           "web.allow_private_networks: true in config.yaml", "refused")
    return CheckedURL(url.strip(), scheme, host, port, addresses)


def resolve_host(host: str, port: int, *, resolve: Resolver | None = None,
                 deadline: float | None = None) -> tuple[str, ...]:
    """The addresses of ``host`` (an IP address is its own, never resolved), from ``resolve``
    (default: :func:`system_resolve`). ``deadline`` (a ``time.monotonic()`` time): waited for
    only until then, on a thread of :data:`LOOKUPS` (:class:`WebError` kind ``timeout`` past
    it); without it, the resolver is called directly. A resolver that fails or finds no
    address is kind ``unreachable``."""
    resolver = resolve or system_resolve
    try:
        if _literal(host):
            return (_literal(host),)
        if deadline is None:
            addresses = tuple(resolver(host, port))
        else:
            addresses = tuple(LOOKUPS.resolve(resolver, host, port, deadline))
    except (OSError, UnicodeError) as exc:
        raise WebError(f"cannot resolve {host!r} ({exc}); check the URL", "unreachable") from exc
    if not addresses:
        raise WebError(f"{host!r} resolves to no address; check the URL", "unreachable")
    return addresses


def _literal(host: str) -> str:
    """``host`` if it is an IP address (never resolved), else ``""``."""
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        return ""

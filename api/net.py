"""Network guards for fetching what the model asks for (SSRF): only http(s) URLs, and only
public addresses unless the user allowed private networks (``web.allow_private_networks``).

:func:`check_url` resolves the host and checks every address it resolves to; a fetcher
then connects to one of the returned addresses (pinned), so a second DNS answer cannot
swap in a private one, and checks again on every redirect.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from .web import WebError

__all__ = ["CheckedURL", "check_url", "is_public_address", "Resolver", "system_resolve"]

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


def check_url(url: str, *, allow_private: bool = False, allowed_hosts: Collection[str] = (),
              resolve: Resolver | None = None) -> CheckedURL:
    """Check ``url`` before fetching it; :class:`WebError` (kind ``refused``) says why not.

    ``allowed_hosts``: host names (lower-case, as in the URL) whose private addresses are
    accepted even without ``allow_private``, e.g. one intranet server. ``resolve`` replaces
    the system resolver."""
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
    try:
        addresses = ((_literal(host),) if _literal(host) else
                     tuple((resolve or system_resolve)(host, port)))
    except (OSError, UnicodeError) as exc:
        raise WebError(f"cannot resolve {host!r} ({exc}); check the URL", "unreachable") from exc
    if not addresses:
        raise WebError(f"{host!r} resolves to no address; check the URL", "unreachable")
    if not allow_private and host not in allowed_hosts:
        blocked = [a for a in addresses if not is_public_address(a)]
        if blocked:
            raise WebError(f"{host} resolves to a private or local address ({', '.join(blocked)});"
                           " fetching it is refused. If you meant to, set "
                           "web.allow_private_networks: true in config.yaml", "refused")
    return CheckedURL(url.strip(), scheme, host, port, addresses)


def _literal(host: str) -> str:
    """``host`` if it is an IP address (never resolved), else ``""``."""
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        return ""

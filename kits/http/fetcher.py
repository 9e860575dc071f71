"""Owner: the builtin plugin `web`.

The SSRF-safe fetcher: a GET of what the model asked for, within the rules of ``net.py``.

:func:`fetch` checks the URL (:func:`~hermes_agent.kits.http.net.check_url`), connects to an address
the check accepted (pinned: the request goes to that IP, with the ``Host`` header and the TLS
server name and certificate check of the host name, so a second DNS answer cannot swap in a
private address), follows redirects itself re-checking every hop, caps the body while it
streams and the whole fetch's time, and reads only text-like content unless asked otherwise.
"""

from __future__ import annotations

import functools
import socket
import threading
import time
from collections.abc import Collection, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin, urlsplit, urlunsplit

from hermes_agent.api import WebError

from .net import CheckedURL, Resolver, check_url

if TYPE_CHECKING:
    import ssl

    import httpx2

__all__ = ["Fetched", "fetch", "is_text_type", "USER_AGENT"]

USER_AGENT = "Mozilla/5.0 (compatible; hermes-agent web fetcher)"
REDIRECT_STATUSES = (301, 302, 303, 307, 308)
_TEXT_APPLICATION_TYPES = ("application/xhtml+xml", "application/xml", "application/json",
                           "application/javascript", "application/x-javascript")


@dataclass(frozen=True)
class Fetched:
    """A fetched response: the final URL (after redirects), its status, media type (lower-case,
    no parameters), body and headers (lower-case names)."""

    url: str
    status: int
    content_type: str
    content: bytes
    headers: Mapping[str, str] = field(default_factory=dict)
    charset: str | None = None
    redirects: tuple[str, ...] = ()  # the URLs redirected to, in order

    @property
    def text(self) -> str:
        """The body decoded with its declared charset (UTF-8 when none or unknown)."""
        try:
            return self.content.decode(self.charset or "utf-8", errors="replace")
        except LookupError:
            return self.content.decode("utf-8", errors="replace")


def is_text_type(media_type: str) -> bool:
    """Whether a media type is text a page extractor can read (HTML, XML, JSON, plain...)."""
    media_type = media_type.lower()
    return (media_type.startswith("text/") or media_type in _TEXT_APPLICATION_TYPES
            or media_type.endswith(("+xml", "+json")))


def fetch(url: str, *, allow_private: bool = False, allowed_hosts: Collection[str] = (),
          max_bytes: int = 5_000_000, timeout: float = 20.0, max_redirects: int = 5,
          headers: Mapping[str, str] | None = None, text_only: bool = True,
          resolve: Resolver | None = None, verify: ssl.SSLContext | bool = True) -> Fetched:
    """GET ``url`` safely; :class:`WebError` says what went wrong and how to fix it.

    ``allow_private``/``allowed_hosts``/``resolve``: as :func:`check_url`, for every hop.
    ``max_bytes``: the body cap (decoded size; past it the fetch stops, kind ``refused``).
    ``timeout``: for the whole fetch, redirects and every host name lookup included (kind
    ``timeout``; a slow lookup is given up at the deadline, see :class:`~.net.LookupPool`).
    ``text_only``: a non-text media type is refused before its body is read (kind
    ``unsupported``).
    ``verify``: TLS verification, or an ``ssl.SSLContext`` trusting other authorities."""
    import httpx2

    deadline = time.monotonic() + timeout
    redirects: list[str] = []
    current = url
    # no kept-alive connections: each hop connects anew, with its own host's TLS name
    with httpx2.Client(trust_env=False, follow_redirects=False,
                       verify=_default_tls() if verify is True else verify,
                       limits=httpx2.Limits(max_keepalive_connections=0)) as client:
        for _ in range(max_redirects + 1):
            client.cookies.clear()  # the jar is keyed by the pinned IP: no cookie crosses hosts
            try:  # the host's lookup counts against the deadline too
                checked = check_url(current, allow_private=allow_private,
                                    allowed_hosts=allowed_hosts, resolve=resolve,
                                    deadline=deadline)
            except WebError as exc:
                if exc.kind == "timeout":
                    raise _timed_out(current, timeout, "the address of "
                                     f"{_host_of(current)} was still being looked up") from exc
                if not redirects:
                    raise
                raise WebError(f"{url} redirected to {current}, which is refused: {exc}",
                               exc.kind) from exc
            with _pinned_response(client, checked, headers or {}, deadline, timeout) as response:
                location = response.headers.get("location")
                if response.status_code in REDIRECT_STATUSES and location:
                    current = urljoin(checked.url, location.strip())
                    redirects.append(current)
                    continue
                return _read(response, checked.url, tuple(redirects), max_bytes, deadline,
                             timeout, text_only)
    raise WebError(f"{url} redirected more than {max_redirects} times; open the final page's "
                   "URL directly", "http")


@contextmanager
def _pinned_response(client: httpx2.Client, checked: CheckedURL, headers: Mapping[str, str],
                     deadline: float, timeout: float) -> Iterator[httpx2.Response]:
    """The streamed response of a GET to one of the checked addresses (the next is tried when
    one refuses the connection); a watchdog cuts the connection at the deadline."""
    import httpx2

    parts = urlsplit(checked.url)
    host = _ascii_host(checked.host)
    default_port = 443 if checked.scheme == "https" else 80
    host_header = host if checked.port == default_port else f"{host}:{checked.port}"
    request_headers = {"User-Agent": USER_AGENT, "Accept": "text/html,text/*;q=0.9,*/*;q=0.5",
                       **headers, "Host": host_header}
    failures = []
    for address in checked.addresses:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        literal = f"[{address}]" if ":" in address else address
        target = urlunsplit((checked.scheme, f"{literal}:{checked.port}", parts.path or "/",
                             parts.query, ""))
        watchdog = Watchdog(deadline)  # from the connection on: headers may trickle too
        request = client.build_request("GET", target, headers=request_headers,
                                       extensions={"sni_hostname": host,
                                                   "trace": watchdog.trace},
                                       timeout=httpx2.Timeout(left))
        try:
            response = client.send(request, stream=True)
        except httpx2.TimeoutException:
            watchdog.cancel()
            break
        except httpx2.ConnectError as exc:
            watchdog.cancel()
            failures.append(f"{address}: {exc}")
            continue
        except httpx2.HTTPError as exc:
            watchdog.cancel()
            if time.monotonic() >= deadline:  # the watchdog cut the headers short
                break
            raise WebError(f"fetching {checked.url} failed ({exc}); check the URL",
                           "unreachable") from exc
        watchdog.watch(response)
        try:
            yield response
        finally:
            watchdog.cancel()
            response.close()
        return
    if failures:
        raise WebError(f"cannot connect to {checked.host} ({'; '.join(failures)}); check the "
                       "URL, or try again later", "unreachable")
    raise _timed_out(checked.url, timeout)


def _read(response: httpx2.Response, url: str, redirects: tuple[str, ...], max_bytes: int,
          deadline: float, timeout: float, text_only: bool) -> Fetched:
    """The body, streamed under the size cap and the deadline."""
    import httpx2

    media_type, charset = _media_type(response.headers.get("content-type", ""))
    if text_only and media_type and not is_text_type(media_type):
        raise WebError(f"{url} is {media_type}, not a web page or text; only text-like pages "
                       "are read (open it with a tool that handles that format)", "unsupported")
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > max_bytes:
        raise _too_large(url, max_bytes)
    chunks, size = [], 0
    try:
        for chunk in response.iter_bytes():
            size += len(chunk)
            if size > max_bytes:
                raise _too_large(url, max_bytes)
            if time.monotonic() > deadline:
                raise _timed_out(url, timeout)
            chunks.append(chunk)
    except httpx2.TimeoutException as exc:
        raise _timed_out(url, timeout) from exc
    except httpx2.HTTPError as exc:
        if time.monotonic() >= deadline:  # the watchdog cut the connection
            raise _timed_out(url, timeout) from exc
        raise WebError(f"reading {url} failed ({exc}); try again later", "unreachable") from exc
    if time.monotonic() >= deadline:  # cut by the watchdog: a body ending with the connection
        raise _timed_out(url, timeout)  # would otherwise look complete
    content = b"".join(chunks)
    if text_only and not media_type and b"\x00" in content[:2048]:
        raise WebError(f"{url} sent binary content without a content type; only text-like "
                       "pages are read", "unsupported")
    return Fetched(url, response.status_code, media_type, content,
                   {k.lower(): v for k, v in response.headers.items()}, charset, redirects)


@functools.cache
def _default_tls() -> ssl.SSLContext:
    """The system's trusted authorities, loaded once (not on every fetch)."""
    import httpx2

    return httpx2.create_ssl_context(trust_env=False)


class Watchdog:
    """(Shared with :mod:`.client`.) At the deadline, shuts the connection's socket down,
    which wakes a read blocked on it: a read timeout alone would let a server that trickles
    its headers or body, or stalls late, run past the deadline. Give :meth:`trace` as the
    request's ``trace`` extension, so the connection is known as soon as it opens, and
    :meth:`watch` the response (a reused connection is known from it only)."""

    _OPENED = ("connection.connect_tcp.complete", "connection.start_tls.complete")

    def __init__(self, deadline: float):
        self._deadline = deadline
        self._stream: Any = None
        self._timer = threading.Timer(max(0.0, deadline - time.monotonic()), self._cut)
        self._timer.daemon = True
        self._timer.start()

    def trace(self, name: str, info: Mapping[str, Any]) -> None:
        if name in self._OPENED and info.get("return_value") is not None:
            self._stream = info["return_value"]  # after TLS, the TLS stream owns the socket
            self._cut_if_late()

    def watch(self, response: Any) -> None:
        stream = response.extensions.get("network_stream")
        if stream is not None:
            self._stream = stream
        self._cut_if_late()

    def cancel(self) -> None:
        self._timer.cancel()

    def _cut_if_late(self) -> None:
        if time.monotonic() >= self._deadline:
            self._cut()

    def _cut(self) -> None:
        stream = self._stream
        sock = stream.get_extra_info("socket") if stream is not None else None
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def _media_type(header: str) -> tuple[str, str | None]:
    media_type, _, params = header.partition(";")
    charset = None
    for param in params.split(";"):
        key, _, value = param.partition("=")
        if key.strip().lower() == "charset" and value.strip():
            charset = value.strip().strip("\"'")
    return media_type.strip().lower(), charset


def _ascii_host(host: str) -> str:
    try:
        return host.encode("idna").decode("ascii")
    except UnicodeError:
        return host


def _too_large(url: str, max_bytes: int) -> WebError:
    return WebError(f"{url} is larger than the {max_bytes:,}-byte cap; it was not read to the "
                    "end. Fetch a smaller page or a more specific URL", "refused")


def _timed_out(url: str, timeout: float, why: str = "") -> WebError:
    why = f" ({why})" if why else ""
    return WebError(f"fetching {url} took longer than {timeout:g}s and was stopped{why}; try "
                    "again later or another source", "timeout")


def _host_of(url: str) -> str:
    try:
        return (urlsplit(url.strip()).hostname or "").rstrip(".") or url
    except ValueError:
        return url

"""Owner: the builtin plugin `web`.

A JSON-over-HTTP client for web backends: timeouts, retries, Retry-After, and errors that
say what to fix with the API key masked out.

    http = WebHTTP(WebService("Brave Search", key_env="BRAVE_SEARCH_API_KEY",
                              key_url="https://api-dashboard.search.brave.com"),
                   "https://api.search.brave.com", headers={"X-Subscription-Token": key},
                   secrets=(key,))
    data = http.request_json("GET", "/res/v1/web/search", params={"q": "hermes"})

The server's host name is looked up within the connect timeout (on a thread of
:data:`~hermes_agent.kits.http.net.LOOKUPS`, as the fetcher's lookups): a DNS server that does not
answer fails the attempt then, instead of holding it for the system resolver's own timeouts.
Connection errors, timeouts, 5xx and 429 are retried (a search changes nothing on the
server); a 429's Retry-After is waited when it is at most ``retry_after_cap`` seconds, else the
call fails at once with ``retry_after`` set. Other 4xx are not retried. Every failure is a
:class:`~hermes_agent.api.WebError` whose message names the service, the status, the
server's own explanation and the fix.
"""

from __future__ import annotations

import json
import logging
import random
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Any

import httpcore2
import httpx2

from hermes_agent.api import WebError

from .fetcher import Watchdog
from .pools import wrap_network_backends
from .net import Resolver, resolve_host
from ..secrets import mask_secrets, mask_url, mask_values

__all__ = ["WebService", "WebHTTP", "retry_after_seconds", "http_options"]

log = logging.getLogger("hermes_agent.web")
#: ``explain(status, body, detail)``: a backend's own error for an answer, or None
Explain = Callable[[int, Any, str], "WebError | None"]


@dataclass(frozen=True)
class WebService:
    """Who a backend talks to, as its error messages name it."""

    label: str  # "Brave Search"
    key_env: str = ""  # the environment variable holding the key ("" when keyless)
    key_url: str = ""  # where a user gets or checks the key
    url_env: str = ""  # the environment variable that overrides the base URL
    rate_hint: str = "or check your plan's limits"  # what else helps against HTTP 429
    plugin: str = ""  # the plugin's name: its settings are plugins.entries.<plugin>


class WebHTTP:
    """One service's HTTP client. Thread-safe; :meth:`close` when done."""

    def __init__(self, service: WebService, base_url: str, *,
                 headers: Mapping[str, str] | None = None, secrets: Iterable[str] = (),
                 timeout: float = 15.0, connect_timeout: float = 5.0, max_retries: int = 2,
                 backoff: float = 0.5, retry_after_cap: float = 30.0,
                 explain: Explain | None = None, max_bytes: int = 32_000_000,
                 resolve: Resolver | None = None, sleep: Callable[[float], None] = time.sleep):
        self.service = service
        self.base_url = base_url.rstrip("/")
        self.max_retries, self.backoff = max(0, max_retries), backoff
        self.retry_after_cap = retry_after_cap
        self.timeout = timeout
        self.connect_timeout = min(connect_timeout, timeout)  # the host name lookup included
        self.max_bytes = max_bytes
        self._secrets = tuple(s for s in secrets if s and len(s) >= 4)
        self._explain = explain
        self._sleep = sleep
        self._http = httpx2.Client(
            base_url=self.base_url, follow_redirects=False,
            headers={"Accept": "application/json", "User-Agent": "hermes-web/0.1",
                     **(headers or {})},
            timeout=httpx2.Timeout(timeout, connect=self.connect_timeout))
        if not wrap_network_backends(self._http, lambda inner: _TimedLookups(inner, resolve)):
            log.warning("web: host name lookups wait for the system resolver's own timeouts: "
                        "this httpx2 version has no connection pool to reach")

    def mask(self, text: str) -> str:
        """``text`` with URL credentials and every secret of this client masked."""
        return mask_values(mask_secrets(text), self._secrets)

    def request_json(self, method: str, path: str, *, params: Mapping[str, Any] | None = None,
                     json_body: Any = None) -> Any:
        """The parsed JSON answer to ``method path``, retried while the failure is
        transient; :class:`WebError` when it fails for good."""
        attempt = 0
        while True:
            attempt += 1
            try:
                return self._attempt(method, path, params, json_body, attempt)
            except _Retryable as retry:
                if attempt > self.max_retries or retry.wait is None:
                    raise retry.error from None
                log.debug("%s: %s; retrying in %.2fs", self.service.label, retry.error,
                          retry.wait)
                self._sleep(retry.wait)

    def close(self) -> None:
        self._http.close()

    # --- one attempt -----------------------------------------------------------------------
    def _attempt(self, method: str, path: str, params: Mapping[str, Any] | None,
                 json_body: Any, attempt: int) -> Any:
        label, where = self.service.label, mask_url(self.base_url)
        deadline = time.monotonic() + self.timeout  # for the whole answer, not each read
        watchdog = Watchdog(deadline)
        try:
            with self._http.stream(method, path, params=_clean(params), json=json_body,
                                   extensions={"trace": watchdog.trace}) as response:
                watchdog.watch(response)
                content = self._body(response, method, path)
        except _LookupTimedOut as late:
            error = WebError(self.mask(f"{label} at {where} was not reached within "
                                       f"{self.connect_timeout:g}s{_tries(attempt)}: "
                                       f"{late.error}"), "timeout")
            raise _Retryable(error, self._backoff(attempt)) from late.error
        except httpx2.TimeoutException as exc:
            raise self._timed_out(attempt) from exc
        except httpx2.TransportError as exc:
            if time.monotonic() >= deadline:  # the watchdog cut a body still coming
                raise self._timed_out(attempt) from exc
            fix = f"check {self.service.url_env} and" if self.service.url_env else "check"
            error = WebError(self.mask(f"cannot reach {label} at {where} "
                                       f"({type(exc).__name__}: {exc}){_tries(attempt)}; "
                                       f"{fix} the network"), "unreachable")
            raise _Retryable(error, self._backoff(attempt)) from exc
        finally:
            watchdog.cancel()
        if time.monotonic() >= deadline:  # cut by the watchdog: the body only looks complete
            raise self._timed_out(attempt)
        if 300 <= response.status_code < 400:
            target = self.mask(response.headers.get("location") or "elsewhere")
            setting = f"; set {self.service.url_env} to where it points" \
                if self.service.url_env else ""
            raise WebError(f"{label} at {where} redirects {method} {path} to {target} "
                           f"(HTTP {response.status_code}){setting}", "http",
                           status=response.status_code)
        text = content.decode(response.encoding or "utf-8", errors="replace")
        try:
            body = json.loads(text) if text.strip() else None
        except ValueError:
            body = None
            if response.status_code < 400:
                raise WebError(f"{label} answered {method} {path} with something that is not "
                               f"JSON ({self.mask(text[:80])!r}...); is {where} really a "
                               f"{label} API?", "malformed", status=response.status_code)
        if response.status_code < 400:
            return body
        raise self._status_error(response.status_code, body, text, response.headers, attempt)

    def _body(self, response: httpx2.Response, method: str, path: str) -> bytes:
        """The answer's body, at most :attr:`max_bytes` of it."""
        chunks, size = [], 0
        for chunk in response.iter_bytes():
            size += len(chunk)
            if size > self.max_bytes:
                raise WebError(f"{self.service.label} answered {method} {path} with more than "
                               f"{self.max_bytes:,} bytes and was not read to the end; is "
                               f"{mask_url(self.base_url)} really a {self.service.label} API?",
                               "malformed", status=response.status_code)
            chunks.append(chunk)
        return b"".join(chunks)

    def _timed_out(self, attempt: int) -> _Retryable:
        slower = (f", or raise plugins.entries.{self.service.plugin}.timeout if it is "
                  "only slow") if self.service.plugin else ""
        error = WebError(f"{self.service.label} at {mask_url(self.base_url)} did not answer "
                         f"within {self.timeout:g}s{_tries(attempt)}; it may be overloaded: "
                         f"try again later{slower}", "timeout")
        return _Retryable(error, self._backoff(attempt))

    def _status_error(self, status: int, body: Any, text: str, headers: Any,
                      attempt: int) -> Exception:
        detail = self.mask(error_detail(body, text))[:300]
        custom = self._explain(status, body, detail) if self._explain else None
        if custom is not None:
            return custom
        label, env, said = self.service.label, self.service.key_env, _said(detail)
        if status == 429:
            hint = retry_after_seconds(headers.get("retry-after"))
            wait = f"; retry after {hint:.0f}s" if hint is not None else "; wait a little"
            error = WebError(f"{label} rate limit reached (HTTP 429{_tries(attempt)}){said}"
                             f"{wait}, {self.service.rate_hint}", "rate_limited",
                             retry_after=hint, status=429)
            if hint is None:
                return _Retryable(error, self._backoff(attempt))
            return _Retryable(error, hint if hint <= self.retry_after_cap else None)
        if status >= 500:
            return _Retryable(WebError(f"{label} failed (HTTP {status}, a server-side problem"
                                       f"{_tries(attempt)}){said}; try again later", "http",
                                       status=status), self._backoff(attempt))
        if status in (401, 403) and env:
            where = f" at {self.service.key_url}" if self.service.key_url else ""
            return WebError(f"{env} was refused by {label} (HTTP {status}){said}; check it"
                            f"{where} and update {env}", "missing_key", status=status)
        return WebError(f"{label} rejected the request (HTTP {status}){said}", "http",
                        status=status)

    def _backoff(self, attempt: int) -> float:
        return min(8.0, self.backoff * 2 ** (attempt - 1)) * random.uniform(0.5, 1.0)


class _TimedLookups(httpcore2.NetworkBackend):
    """Wraps a connection pool's network backend so it connects to addresses looked up by
    :func:`~.net.resolve_host` within the connect timeout: given the name, the backend's
    ``socket.create_connection`` would first wait out the system resolver's own timeouts
    (20-40 s when the DNS servers do not answer)."""

    def __init__(self, inner: Any, resolve: Resolver | None):
        self._inner, self._resolve = inner, resolve

    def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                    local_address: str | None = None,
                    socket_options: Iterable[Any] | None = None) -> httpcore2.NetworkStream:
        deadline = None if timeout is None else time.monotonic() + timeout
        try:
            addresses = resolve_host(host, port, resolve=self._resolve, deadline=deadline)
        except WebError as exc:
            if exc.kind == "timeout":
                raise _LookupTimedOut(exc) from exc
            raise httpcore2.ConnectError(str(exc)) from exc  # reported as before: unreachable
        failures = []
        for address in addresses:  # in the resolver's order, as create_connection tries them
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise httpcore2.ConnectTimeout(f"connecting to {host} took longer than "
                                               f"{timeout:g}s")
            try:
                return self._inner.connect_tcp(address, port, left, local_address,
                                               socket_options)
            except httpcore2.ConnectError as exc:
                failures.append(f"{address}: {exc}")
        raise httpcore2.ConnectError("; ".join(failures))

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Iterable[Any] | None = None) -> Any:
        return self._inner.connect_unix_socket(path, timeout, socket_options)

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


class _LookupTimedOut(Exception):
    """A connection's host name lookup, given up at the connect timeout (not one of httpcore's
    errors, so httpx lets it through as it is)."""

    def __init__(self, error: WebError):
        super().__init__(str(error))
        self.error = error


class _Retryable(Exception):
    """A failed attempt; ``wait`` seconds before the next one, or None: do not retry."""

    def __init__(self, error: WebError, wait: float | None):
        super().__init__(str(error))
        self.error, self.wait = error, wait


def error_detail(body: Any, text: str) -> str:
    """The server's own explanation, from the usual JSON error shapes or the raw text."""
    if isinstance(body, dict):
        for key in ("detail", "error", "message"):
            value = body.get(key)
            if isinstance(value, dict):
                value = value.get("detail") or value.get("error") or value.get("message")
            if value:
                return str(value)
        return ""
    return " ".join(text.split())[:300] if not text.lstrip().startswith("<") else ""


def retry_after_seconds(value: str | None) -> float | None:
    """Seconds from a Retry-After header (a number or an HTTP date); None if unusable."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


#: settings of ``plugins.entries.<backend>`` that tune :class:`WebHTTP`, and their types
HTTP_SETTINGS: dict[str, type] = {"timeout": float, "connect_timeout": float,
                                  "max_retries": int, "retry_after_cap": float}


def http_options(config: Mapping[str, Any] | None) -> dict[str, Any]:
    """The :data:`HTTP_SETTINGS` present in a backend's config, as keyword arguments of
    :class:`WebHTTP`; a value of the wrong type or below zero is logged and left out."""
    options: dict[str, Any] = {}
    for key, kind in HTTP_SETTINGS.items():
        value = (config or {}).get(key)
        if value is None:
            continue
        try:
            number = kind(value)
            if number < 0 or isinstance(value, bool):
                raise ValueError(value)
        except (TypeError, ValueError):
            log.warning("web: ignoring %s=%r (a number of at least 0 is expected)", key, value)
            continue
        options[key] = number
    return options


def _clean(params: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if params is None:
        return None
    return {k: (str(v).lower() if isinstance(v, bool) else v) for k, v in params.items()
            if v is not None and v != ""}


def _said(detail: str) -> str:
    detail = detail.rstrip(". \n")
    return f": {detail}" if detail else ""


def _tries(attempt: int) -> str:
    return f", {attempt} tries" if attempt > 1 else ""

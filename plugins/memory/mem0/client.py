"""A Mem0 Platform REST client over httpx: ``Authorization: Token <key>``, timeouts, retries
with backoff (connection errors, 429 with its Retry-After, 5xx), a time budget per call, and
a circuit breaker. Errors are :class:`~.errors.Mem0Error` with the key masked out.

Endpoints (https://docs.mem0.ai/api-reference): add ``POST /v1/memories/``, search
``POST /v2/memories/search/``, list ``POST /v2/memories/``, get/update/delete
``/v1/memories/{id}/``, and ``GET /v1/ping/``.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import httpx2

from hermes_agent.kits.secrets import mask_url
from hermes_agent.kits.http import retry_after_seconds as retry_after

from .breaker import CircuitBreaker
from .errors import DEFAULT_HOST, Mem0Error, Mem0Unavailable, Redactor, detail_of, status_error

log = logging.getLogger("hermes_agent.plugins.mem0")
USER_AGENT = "hermes-mem0/0.1"


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 2  # attempts after the first
    backoff: float = 0.5  # first wait, doubled each retry (with jitter)
    backoff_cap: float = 8.0
    retry_after_cap: float = 30.0  # longest Retry-After honoured


@dataclass(frozen=True)
class Timeouts:
    connect: float = 3.0
    read: float = 10.0


class Mem0Client:
    """One Mem0 account (or self-hosted server). Thread-safe; close it when done."""

    def __init__(self, *, api_key: str = "", host: str = DEFAULT_HOST,
                 timeouts: Timeouts = Timeouts(), retry: RetryPolicy = RetryPolicy(),
                 breaker: CircuitBreaker | None = None,
                 sleep: Callable[[float], None] = time.sleep):
        self.host = (host or DEFAULT_HOST).rstrip("/")
        self.timeouts, self.retry = timeouts, retry
        self.breaker = breaker or CircuitBreaker()
        self._sleep = sleep
        self._has_key = bool(api_key)
        self.redact = Redactor(api_key)
        headers = {"Content-Type": "application/json", "Accept": "application/json",
                   "User-Agent": USER_AGENT}
        if api_key:
            headers["Authorization"] = f"Token {api_key}"
        self._http = httpx2.Client(base_url=self.host, headers=headers, follow_redirects=False,
                                   timeout=httpx2.Timeout(timeouts.read, connect=timeouts.connect))
        self._closed = threading.Event()

    # --- operations ------------------------------------------------------------------------
    def ping(self, *, budget: float | None = None) -> dict[str, Any]:
        return self._request("GET", "/v1/ping/", budget=budget) or {}

    def add(self, messages: list[dict[str, str]], *, user_id: str | None = None,
            agent_id: str | None = None, run_id: str | None = None,
            metadata: dict[str, Any] | None = None, infer: bool | None = None,
            budget: float | None = None) -> list[dict[str, Any]]:
        """Store messages; Mem0 extracts memories from them (``infer=False``: stored as they
        are). Not retried after a read timeout: the server may have stored them already."""
        body: dict[str, Any] = {"messages": messages}
        for key, value in (("user_id", user_id), ("agent_id", agent_id), ("run_id", run_id),
                           ("metadata", metadata), ("infer", infer)):
            if value is not None and value != "":
                body[key] = value
        data = self._request("POST", "/v1/memories/", json=body, idempotent=False,
                             budget=budget)
        return results_of(data)

    def search(self, query: str, *, filters: dict[str, Any], top_k: int = 5,
               threshold: float | None = None,
               budget: float | None = None) -> list[dict[str, Any]]:
        body: dict[str, Any] = {"query": query, "filters": filters, "top_k": top_k}
        if threshold is not None:
            body["threshold"] = threshold
        return results_of(self._request("POST", "/v2/memories/search/", json=body,
                                         budget=budget))

    def list(self, *, filters: dict[str, Any], page: int = 1, page_size: int = 100,
             budget: float | None = None) -> list[dict[str, Any]]:
        body = {"filters": filters, "page": page, "page_size": page_size}
        return results_of(self._request("POST", "/v2/memories/", json=body, budget=budget))

    def get(self, memory_id: str) -> dict[str, Any]:
        return self._request("GET", _memory_path(memory_id)) or {}

    def update(self, memory_id: str, *, text: str | None = None,
               metadata: dict[str, Any] | None = None) -> dict[str, Any]:
        body: dict[str, Any] = {}
        if text is not None:
            body["text"] = text
        if metadata is not None:
            body["metadata"] = metadata
        return self._request("PUT", _memory_path(memory_id), json=body) or {}

    def delete(self, memory_id: str) -> None:
        self._request("DELETE", _memory_path(memory_id))

    def close(self) -> None:
        if not self._closed.is_set():
            self._closed.set()
            self._http.close()

    @property
    def closed(self) -> bool:
        return self._closed.is_set()

    # --- the request loop ------------------------------------------------------------------
    def _request(self, method: str, path: str, *, json: Any = None, idempotent: bool = True,
                 budget: float | None = None) -> Any:
        """One call: retried while the failure is transient, retries are left and the
        budget (seconds, whole call) allows; the breaker hears how the call ended."""
        what = f"{method} {path}"
        if not self.breaker.allow():
            raise Mem0Unavailable(
                f"Mem0 is paused after {self.breaker.threshold} failed calls in a row; the next "
                f"try is in {self.breaker.remaining():.0f}s (host {mask_url(self.host)})")
        deadline = None if budget is None else time.monotonic() + budget
        attempt = 0
        while True:
            attempt += 1
            error, outcome = self._attempt(method, path, json, what, idempotent, deadline,
                                           attempt)
            if error is None:
                self.breaker.success()
                return outcome  # the parsed body
            wait = float(outcome)
            left = None if deadline is None else deadline - time.monotonic()
            retryable = wait >= 0 and attempt <= self.retry.max_retries
            if retryable and (left is None or wait < left - 0.05):
                log.debug("mem0: %s; retrying in %.2fs", self.redact(str(error)), wait)
                self._sleep(wait)
                continue
            if error.outage:
                if self.breaker.failure():
                    log.warning("mem0: pausing calls for %.0fs after %d failures in a row; "
                                "last: %s", self.breaker.cooldown, self.breaker.threshold,
                                error)
            else:
                self.breaker.success()  # the service answered: it is up
            raise error

    def _attempt(self, method: str, path: str, json: Any, what: str, idempotent: bool,
                 deadline: float | None, attempt: int) -> tuple[Mem0Error | None, Any]:
        """``(None, body)`` on success, else ``(error, wait)``: the seconds to wait before a
        retry, or -1 when the failure must not be retried."""
        read = self.timeouts.read
        if deadline is not None:
            read = min(read, deadline - time.monotonic())
            if read <= 0:
                return Mem0Error(f"Mem0 {what} ran out of its time budget", outage=True), -1.0
        timeout = httpx2.Timeout(read, connect=min(self.timeouts.connect, read))
        try:
            response = self._http.request(method, path, json=json, timeout=timeout)
        except httpx2.TimeoutException as exc:
            connecting = isinstance(exc, (httpx2.ConnectTimeout, httpx2.PoolTimeout))
            hint = ("" if connecting or read < self.timeouts.read else
                    "; raise plugins.entries.mem0.timeout if it is only slow")
            error = Mem0Error(f"Mem0 at {mask_url(self.host)} did not answer {what} within "
                              f"{read:.1f}s{hint}", outage=True)
            return error, self._backoff(attempt) if (connecting or idempotent) else -1.0
        except httpx2.TransportError as exc:
            error = Mem0Error(f"cannot reach Mem0 at {mask_url(self.host)} for {what} "
                              f"({type(exc).__name__}); check MEM0_HOST and the network",
                              outage=True)
            sent = not isinstance(exc, httpx2.ConnectError)
            return error, -1.0 if (sent and not idempotent) else self._backoff(attempt)
        if response.status_code < 400:
            return None, _json_or_none(response)
        detail = self.redact(detail_of(_json_or_none(response), response.text))
        error = status_error(response.status_code, detail, what=what,
                             host=mask_url(self.host), has_key=self._has_key,
                             attempts=attempt)
        if response.status_code == 429:
            hinted = retry_after(response.headers.get("retry-after"))
            if hinted is not None:
                return error, min(hinted, self.retry.retry_after_cap)
            return error, self._backoff(attempt)
        if response.status_code >= 500:
            return error, self._backoff(attempt)
        return error, -1.0

    def _backoff(self, attempt: int) -> float:
        base = min(self.retry.backoff_cap, self.retry.backoff * 2 ** (attempt - 1))
        return base * random.uniform(0.5, 1.0)


def results_of(data: Any) -> list[dict[str, Any]]:
    """The memories of a list answer: a bare list, or ``{"results"|"memories": [...]}``."""
    if isinstance(data, dict):
        data = data.get("results", data.get("memories", []))
    return [item for item in data if isinstance(item, dict)] if isinstance(data, list) else []


def _memory_path(memory_id: str) -> str:
    if not memory_id or not str(memory_id).strip():
        raise Mem0Error("a memory id is required")
    return f"/v1/memories/{quote(str(memory_id).strip(), safe='')}/"


def _json_or_none(response: httpx2.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return None

"""The Firecrawl REST API over httpx: one POST, its errors as :class:`WebError` messages that
say what to fix and never hold the API key.

A server error or a dropped connection is retried once; a rate limit is not (its Retry-After
goes back to the caller in ``WebError.retry_after``)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import httpx2

from hermes_agent.api import WebError
from hermes_agent.kits.http import retry_after_seconds
from hermes_agent.kits.secrets import mask_secrets, mask_values

HOSTED = "https://api.firecrawl.dev"
KEY_URL = "https://www.firecrawl.dev/app/api-keys"
USER_AGENT = "hermes-firecrawl/0.1"
RETRIED = (500, 502, 503, 504)


def api_base(url: str) -> str:
    """The versioned base: a URL ending in /v1 or /v2 is used as written, else /v2 is added."""
    url = (url or HOSTED).rstrip("/")
    return url if url.endswith(("/v1", "/v2")) else f"{url}/v2"


class FirecrawlClient:
    """POSTs to one Firecrawl server. Thread-safe; close it when done."""

    def __init__(self, *, api_key: str, api_url: str = "", timeout: float = 60.0,
                 connect_timeout: float = 5.0, retries: int = 1, backoff: float = 0.5,
                 sleep: Callable[[float], None] = time.sleep):
        self.base = api_base(api_url)
        self.hosted = self.base.startswith(HOSTED)
        self._key = api_key
        self._retries, self._backoff, self._sleep = retries, backoff, sleep
        headers = {"Content-Type": "application/json", "Accept": "application/json",
                   "User-Agent": USER_AGENT}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self._http = httpx2.Client(headers=headers, follow_redirects=False, trust_env=False,
                                   timeout=httpx2.Timeout(timeout, connect=connect_timeout))
        self.timeout = timeout

    def post(self, endpoint: str, body: dict[str, Any]) -> dict[str, Any]:
        """The JSON answer of ``POST <base>/<endpoint>``, checked for ``success``."""
        url = f"{self.base}/{endpoint}"
        for attempt in range(self._retries + 1):
            last = attempt == self._retries
            try:
                response = self._http.post(url, json=body)
            except httpx2.TimeoutException as exc:
                raise WebError(f"Firecrawl did not answer /{endpoint} within "
                               f"{self.timeout:g}s; try again, or raise "
                               "plugins.entries.firecrawl.timeout", "timeout") from exc
            except httpx2.HTTPError as exc:
                if last:
                    raise WebError(self._redact(f"cannot reach Firecrawl at {self.base} "
                                                f"({exc}); check FIRECRAWL_API_URL and the "
                                                "network"), "unreachable") from exc
                self._sleep(self._backoff)
                continue
            if response.status_code in RETRIED and not last:
                self._sleep(self._backoff)
                continue
            return self._answer(response, endpoint)
        raise AssertionError("unreachable")  # the last attempt returns or raises

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> FirecrawlClient:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _answer(self, response: httpx2.Response, endpoint: str) -> dict[str, Any]:
        try:
            data = response.json()
        except ValueError:
            data = None
        status = response.status_code
        if status >= 400:
            raise self._status_error(status, _detail(data, response.text), response, endpoint)
        if not isinstance(data, dict):
            raise WebError(f"Firecrawl's answer to /{endpoint} is not its API's JSON "
                           f"({_snippet(response.text)!r}); check that FIRECRAWL_API_URL "
                           "points at a Firecrawl server", "malformed", status=status)
        if data.get("success") is False:
            raise WebError(self._redact(f"Firecrawl could not do /{endpoint}: "
                                        f"{_detail(data, '')}"), "http", status=status)
        return data

    def _status_error(self, status: int, detail: str, response: httpx2.Response,
                      endpoint: str) -> WebError:
        detail = self._redact(f": {detail}" if detail else "")
        where = "Firecrawl" if self.hosted else f"the Firecrawl server at {self.base}"
        if status in (401, 403):
            fix = (f"check FIRECRAWL_API_KEY (keys: {KEY_URL})" if self.hosted else
                   "check FIRECRAWL_API_KEY against the key that server expects")
            return WebError(f"{where} refused the API key (HTTP {status}){detail}; {fix}",
                            "missing_key", status=status)
        if status == 402:
            return WebError(f"{where} wants payment (HTTP 402){detail}: the account is out of "
                            "credits; top up or upgrade the plan, or set web.backend to "
                            "another backend", "http", status=status)
        if status == 429:
            wait = retry_after_seconds(response.headers.get("retry-after"))
            when = f"retry after {wait:g}s" if wait is not None else "wait a little"
            return WebError(f"{where} rate limit reached (HTTP 429){detail}; {when}",
                            "rate_limited", retry_after=wait, status=status)
        if status in (408, 504):
            return WebError(f"{where} timed out on /{endpoint} (HTTP {status}){detail}; try "
                            "again, or a simpler page", "timeout", status=status)
        if status >= 500:
            return WebError(f"{where} failed on /{endpoint} (HTTP {status}, a server-side "
                            f"error){detail}; try again later", "unreachable", status=status)
        return WebError(f"{where} rejected /{endpoint} (HTTP {status}){detail}", "http",
                        status=status)

    def _redact(self, text: str) -> str:
        return mask_values(mask_secrets(text), (self._key,), 4)


def _detail(data: Any, text: str) -> str:
    """The server's own explanation: ``error`` (with ``details``) of its JSON, or the text."""
    if isinstance(data, dict):
        error = str(data.get("error") or data.get("message") or "")
        details = data.get("details")
        if details:
            error = f"{error} ({details})" if error else str(details)
        return error[:300]
    return _snippet(text)


def _snippet(text: str) -> str:
    return " ".join(text.split())[:120]

"""Mem0 errors whose messages say what to fix, and never hold the API key."""

from __future__ import annotations

from typing import Any

from hermes_agent.kits.secrets import mask_secrets, mask_values

DEFAULT_HOST = "https://api.mem0.ai"
KEY_URL = "https://app.mem0.ai/dashboard/api-keys"


class Mem0Error(Exception):
    """A Mem0 call failed. ``status`` is the HTTP status (None: no answer); ``outage`` marks
    failures that say the service is down or overloaded (they count for the breaker)."""

    def __init__(self, message: str, *, status: int | None = None, outage: bool = False):
        super().__init__(message)
        self.status = status
        self.outage = outage


class Mem0Unavailable(Mem0Error):
    """Mem0 is paused by the circuit breaker after failing too often in a row."""

    def __init__(self, message: str):
        super().__init__(message, outage=True)


class Redactor:
    """Masks credentials in URLs and every occurrence of the API key."""

    def __init__(self, api_key: str):
        self._key = api_key if len(api_key) >= 4 else ""

    def __call__(self, text: str) -> str:
        return mask_values(mask_secrets(text), (self._key,))


def detail_of(body: Any, text: str) -> str:
    """The server's own explanation, from a JSON error body or the raw text."""
    if isinstance(body, dict):
        for key in ("detail", "error", "message"):
            value = body.get(key)
            if value:
                return value if isinstance(value, str) else str(value)
        return str(body)
    return text.strip()


def status_error(status: int, detail: str, *, what: str, host: str, has_key: bool,
                 attempts: int) -> Mem0Error:
    """The error for an HTTP error answer to ``what`` (e.g. ``POST /v1/memories/``)."""
    detail = detail[:300].rstrip(". \n")
    detail = f": {detail}" if detail else ""
    hosted = host.rstrip("/") == DEFAULT_HOST
    tried = f"; tried {attempts} times" if attempts > 1 else ""
    if status == 401:
        if not has_key:
            message = (f"the Mem0 server at {host} wants an API key (HTTP 401); set "
                       "MEM0_API_KEY in the environment or in $HERMES_HOME/.env")
        elif hosted:
            message = (f"MEM0_API_KEY was refused by Mem0 (HTTP 401){detail}; check the key "
                       f"at {KEY_URL} and update MEM0_API_KEY")
        else:
            message = (f"MEM0_API_KEY was refused by the Mem0 server at {host} (HTTP 401)"
                       f"{detail}; check the key that server expects")
        return Mem0Error(message, status=status)
    if status == 403:
        return Mem0Error(f"MEM0_API_KEY may not do {what} (HTTP 403){detail}; check the key's "
                         "organization and project permissions", status=status)
    if status == 404:
        return Mem0Error(f"Mem0 found nothing for {what} (HTTP 404){detail}", status=status)
    if status == 429:
        return Mem0Error(f"Mem0 rate limit reached for {what} (HTTP 429{tried}){detail}; "
                         "wait a little, or check your plan's limits", status=status, outage=True)
    if status >= 500:
        return Mem0Error(f"Mem0 at {host} failed on {what} (HTTP {status}, a server-side "
                         f"problem{tried}){detail}", status=status, outage=True)
    return Mem0Error(f"Mem0 rejected {what} (HTTP {status}){detail}", status=status)

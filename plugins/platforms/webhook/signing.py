"""The webhook's signature scheme, both ways: ``X-Hermes-Signature: sha256=<hex>``, the
HMAC-SHA256 of the raw body keyed with the secret; with ``X-Hermes-Timestamp: <unix
seconds>``, of ``<timestamp>.<body>`` instead, and the timestamp must be recent (a replay of
a timestamped request is refused within that window too). Only the standard library."""

from __future__ import annotations

import hashlib
import hmac
import math
import time

SIGNATURE_HEADER = "X-Hermes-Signature"
TIMESTAMP_HEADER = "X-Hermes-Timestamp"
DELIVERY_HEADER = "X-Hermes-Delivery"


def sign(secret: str, body: bytes, timestamp: str | None = None) -> str:
    """The ``X-Hermes-Signature`` value of ``body`` (sent with ``timestamp``, if any)."""
    payload = body if timestamp is None else timestamp.encode() + b"." + body
    return "sha256=" + hmac.new(secret.encode(), payload, hashlib.sha256).hexdigest()


def check(secret: str, body: bytes, signature: str | None, timestamp: str | None, *,
          tolerance: float, require_timestamp: bool, now: float | None = None) -> str | None:
    """None when the request is signed with ``secret``; else why not (safe to return to the
    sender: it never holds the secret or the expected signature)."""
    if not signature:
        return f"missing {SIGNATURE_HEADER} header: sign the raw body with HMAC-SHA256"
    if timestamp is None and require_timestamp:
        return f"missing {TIMESTAMP_HEADER} header: this webhook requires timestamped requests"
    if timestamp is not None:
        try:
            age = abs((time.time() if now is None else now) - float(timestamp))
        except ValueError:
            age = math.nan
        if not math.isfinite(age):  # "nan" would never be too old: replayable for ever
            return f"{TIMESTAMP_HEADER} must be unix seconds"
        if age > tolerance:
            return (f"{TIMESTAMP_HEADER} is more than {tolerance:g}s off this server's clock; "
                    "sign with the current time")
    if not hmac.compare_digest(signature.strip().encode(), sign(secret, body, timestamp).encode()):
        return f"invalid {SIGNATURE_HEADER}: it does not match the body and WEBHOOK_SECRET"
    return None


class ReplayGuard:
    """Remembers the signatures of timestamped requests while their timestamp is valid, so the
    same signed request is accepted once."""

    def __init__(self, window: float):
        self.window = window
        self._seen: dict[str, float] = {}  # signature -> when it may be forgotten

    def first_time(self, signature: str, now: float | None = None) -> bool:
        now = time.monotonic() if now is None else now
        self._seen = {sig: until for sig, until in self._seen.items() if until > now}
        if signature in self._seen:
            return False
        self._seen[signature] = now + 2 * self.window  # a timestamp may be early or late
        return True

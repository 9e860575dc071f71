"""Classifying failed model calls into :class:`~hermes_agent.api.ProviderError` (the error
classes are contracts, in ``hermes_agent.api``).

:func:`classify` maps an SDK or network exception to a :class:`ProviderError` using the
HTTP status first, then the provider's error code, then the message text.
"""

from __future__ import annotations

import email.utils
import json
import time
from typing import Any

from hermes_agent.api import ProviderError
from hermes_agent.kits.secrets import mask_secrets, mask_url, mask_values


_CONTEXT = ("context length", "context_length", "maximum context", "too many tokens",
            "prompt is too long", "context window", "input is too long", "reduce the length")
_HTTP_MODULES = ("httpx", "httpx2", "httpcore", "httpcore2", "h11")
_BILLING = ("insufficient_quota", "billing", "credit balance", "insufficient credits",
            "payment required", "quota exceeded", "exceeded your current quota")


def parse_retry_after(headers: Any) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``retry-after`` (seconds or HTTP date)."""
    if headers is None:
        return None
    try:
        millis = headers.get("retry-after-ms")
        if millis:
            return max(0.0, float(millis) / 1000)
        value = headers.get("retry-after")
    except (AttributeError, ValueError):
        return None
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        parsed = email.utils.parsedate_to_datetime(value) if value else None
        return max(0.0, parsed.timestamp() - time.time()) if parsed else None


def _body_message(exc: Any) -> tuple[str, str]:
    """(code or type, message) from an SDK error body."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict):
            code = str(error.get("code") or error.get("type") or "")
            return code, str(error.get("message") or "")
        if isinstance(error, str):
            return "", error
    return "", str(getattr(exc, "message", "") or exc)


def reason_for(status: int | None, code: str, text: str) -> str:
    lowered = f"{code} {text}".lower()
    if status in (401, 403) or code in ("authentication_error", "invalid_api_key",
                                         "permission_error"):
        return "billing" if any(k in lowered for k in _BILLING) else "auth"
    if status == 402 or any(k in lowered for k in _BILLING):
        return "billing"
    if status == 413 or any(k in lowered for k in _CONTEXT):
        return "context_overflow"
    if status == 429 or code == "rate_limit_error":
        return "rate_limit"
    if status == 404 or code == "model_not_found":
        return "model_not_found"
    if status == 529 or code == "overloaded_error":
        return "overloaded"
    if status in (408,) or code == "timeout":
        return "timeout"
    if status is not None and status >= 500:
        return "server_error"
    if status is not None and 400 <= status < 500:
        return "bad_request"
    return "unknown"


def fix_for(reason: str, provider: str, model: str, key_env: tuple[str, ...] = (),
            base_url: str = "") -> str:
    key = key_env[0] if key_env else f"{provider.upper().replace('-', '_')}_API_KEY"
    return {
        "auth": f"check the API key: set {key} in $HERMES_HOME/.env (or run `hermes setup`), "
                f"or set model.api_key",
        "billing": f"add credit or raise the spending limit of your {provider} account, or "
                   "configure fallback_providers",
        "rate_limit": "wait and retry, lower the request rate, or configure fallback_providers",
        "context_overflow": "the conversation is larger than the model's context window: "
                            "compress it (/compress) or use a model with a larger window",
        "model_not_found": f"check the model id `{model}` (hermes model --list shows the "
                           f"provider's models) or choose another with `hermes model --model ID`",
        "server_error": f"{provider} had a server error; retry later or configure "
                        "fallback_providers",
        "overloaded": f"{provider} is overloaded; retry later or configure fallback_providers",
        "network": f"cannot reach {mask_url(base_url) or provider}; check the network, the "
                   "base_url and that the server is running",
        "timeout": "the request timed out; raise model.timeout or retry",
        "bad_request": "the provider rejected the request; check model options and extra_body",
    }.get(reason, "retry, or run with HERMES_RAISE_ERRORS=1 for details")


def brief(error: ProviderError) -> str:
    """A few words on what went wrong, for a progress line: ``connection refused``,
    ``HTTP 503 (server error)``, ``timed out``."""
    causes = []
    cause: BaseException | None = error.__cause__
    while cause is not None and len(causes) < 5:
        causes.append(str(cause).lower())
        cause = cause.__cause__ or cause.__context__
    said = " ".join(causes)
    if error.reason == "network":
        for words, text in (("refused", "connection refused"), ("reset", "connection reset"),
                            ("name or service", "unknown host"),
                            ("nodename", "unknown host"), ("unreachable", "network unreachable")):
            if words in said:
                return text
        return "cannot connect"
    if error.reason == "timeout":
        return "timed out"
    words = error.reason.replace("_", " ")
    return f"HTTP {error.status_code} ({words})" if error.status_code else words


_MIN_SECRET = 8  # shorter values (placeholders such as "x") are not masked


def _scrub(exc: BaseException, secrets: tuple[str, ...]) -> None:
    """Mask the secrets in an exception and its causes in place (their messages, an SDK
    error's ``message`` and ``body``), so a traceback or log of the cause cannot show them."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        current.args = tuple(mask_values(a, secrets, _MIN_SECRET) if isinstance(a, str) else a
                             for a in current.args)
        for name in ("message", "body"):
            value = getattr(current, name, None)
            if isinstance(value, str):
                masked: Any = mask_values(value, secrets, _MIN_SECRET)
            elif isinstance(value, (dict, list)):
                text = json.dumps(value, default=str)
                masked = json.loads(mask_values(text, secrets, _MIN_SECRET)) if any(
                    s and len(s) >= _MIN_SECRET and s in text for s in secrets) else value
            else:
                continue
            try:
                setattr(current, name, masked)
            except AttributeError:  # a read-only property: its args were masked above
                pass
        current = current.__cause__ or current.__context__


# getaddrinfo's answers that mean "no such name" (EAI_NONAME, EAI_NODATA, EAI_ADDRFAMILY), as
# opposed to EAI_AGAIN (the resolver could not be asked: that one may pass)
_NO_SUCH_HOST = ("name or service not known", "nodename nor servname", "no address associated",
                 "address family for hostname not supported")


def unknown_host(exc: BaseException, base_url: str = "") -> str | None:
    """The host name of ``base_url`` when ``exc`` (or one of its causes) says it does not
    resolve, else None."""
    import socket

    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        said = str(current).lower()
        if isinstance(current, socket.gaierror) and current.errno == socket.EAI_AGAIN:
            return None
        if isinstance(current, socket.gaierror) or any(k in said for k in _NO_SUCH_HOST):
            from urllib.parse import urlsplit

            try:
                return urlsplit(base_url).hostname or base_url or "the provider's host"
            except ValueError:
                return "the provider's host"
        current = current.__cause__ or current.__context__
    return None


def classify(exc: BaseException, *, provider: str, model: str, key_env: tuple[str, ...] = (),
             base_url: str = "", secrets: tuple[str, ...] = ()) -> ProviderError:
    """Turn any exception from an SDK call into a :class:`ProviderError`. ``secrets`` (the
    API key the call sent) are masked in its message and in the exception it wraps: a
    provider's error body may echo the key, and nothing hermes prints, logs or stores may."""
    if secrets:
        _scrub(exc, secrets)
    if isinstance(exc, ProviderError):
        return exc
    status = getattr(exc, "status_code", None)
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None) if response is not None else None
    code, text = _body_message(exc)
    name = type(exc).__name__
    if status is None and ("Timeout" in name or isinstance(exc, TimeoutError)):
        reason = "timeout"
    elif status is None and ("Connection" in name or isinstance(exc, OSError)
                             or type(exc).__module__.split(".")[0] in _HTTP_MODULES):
        reason = "network"  # incl. a connection dropped mid-response (RemoteProtocolError)
    else:
        reason = reason_for(status, code, text)
    detail = text or str(exc) or name
    host = unknown_host(exc, base_url) if reason == "network" else None
    where = f"{provider} ({model})" if model else provider
    if host is not None:  # not transient: retrying a name that does not resolve only waits
        error = ProviderError(mask_values(mask_secrets(
            f"{where}: cannot resolve the host name {host!r} (DNS: no such host) "
            f"[network]. Fix: check the host in the base_url ({mask_url(base_url) or '-'}: "
            "model.base_url in config.yaml or the provider's *_BASE_URL variable) for a typo, "
            "and that this machine's DNS and network work"), secrets, _MIN_SECRET),
            reason="network", provider=provider, model=model, retryable=False)
        error.__cause__ = exc
        return error
    status_text = f"HTTP {status}: " if status else ""
    # SDK and network messages may quote the URL, credentials included
    message = mask_values(mask_secrets(f"{where}: {status_text}{detail.strip()} [{reason}]. Fix: "
                                       f"{fix_for(reason, provider, model, key_env, base_url)}"),
                          secrets, _MIN_SECRET)
    error = ProviderError(message, reason=reason, status_code=status,
                          retry_after=parse_retry_after(headers), provider=provider, model=model)
    error.__cause__ = exc
    return error

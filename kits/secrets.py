"""Owner: the builtin plugin `core_tools`.

Keeping secrets out of sight: masking them in URLs and text hermes shows or logs, and
leaving them out of the environment of commands the agent runs.

``mask_url("https://user:pw@host/v1?api_key=k")`` gives ``https://user:***@host/v1?api_key=***``:
the password of the userinfo and the values of secret-looking query (and fragment)
parameters become ``***``; the scheme, user name, host, port and path stay readable, so the
text still says where a request went. :func:`mask_secrets` does the same for every URL in a
free text (an error message, a log line), and :class:`SecretMaskingFilter` for log records.
Standard library only; urllib.parse and the patterns load on first use, so installing the
logging filter at start-up costs next to nothing.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterable, Mapping
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hermes_agent import Kernel

MASK = "***"
# A query or fragment parameter whose name ends in one of these words carries a secret
# (api_key, access_token, X-Amz-Signature, sig, client_secret, password, ...).
_SECRET_PARAM = (r"(?:^|[_.\-])(?:api[_.\-]?key|apikey|key|token|secret|password|passwd|pwd|"
                 r"pass|auth|authorization|signature|sig|credential|credentials|session)$")
# A URL inside free text: scheme://, then anything up to whitespace or a quote/bracket.
_URL_IN_TEXT = r"\b[A-Za-z][A-Za-z0-9+.\-]*://[^\s'\"<>`]+"
_TRAILING = ".,;:!?)]}"
# A query parameter outside a full URL (a path a server echoes: "no route /v1?token=...").
_PARAM_IN_TEXT = r"(?<=[?&#])([A-Za-z0-9_.\-]+)=([^&\s'\"#<>]+)"
# A user name alone (``https://TOKEN@host``) is masked when it is this long: tokens are.
_TOKEN_USER_LENGTH = 16


@cache
def _pattern(source: str) -> re.Pattern[str]:
    return re.compile(source, re.I)


def _mask_params(text: str) -> str:
    from urllib.parse import unquote

    parts = []
    for part in text.split("&"):
        name, sep, value = part.partition("=")
        if sep and value and _pattern(_SECRET_PARAM).search(unquote(name)):
            part = f"{name}={MASK}"
        parts.append(part)
    return "&".join(parts)


def mask_url(url: str) -> str:
    """``url`` with its credentials replaced by ``***``; text that is not a URL is returned
    unchanged (the empty string, a bare host name)."""
    if not url or "://" not in url:
        return url
    from urllib.parse import urlsplit, urlunsplit

    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018  (raises ValueError on a malformed netloc)
    except ValueError:
        return _mask_unparsable(url)
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, _, hostport = netloc.rpartition("@")
        user, has_password, _ = userinfo.partition(":")
        if has_password:
            userinfo = f"{user}:{MASK}"
        elif len(user) >= _TOKEN_USER_LENGTH:
            userinfo = MASK
        netloc = f"{userinfo}@{hostport}"
    query = _mask_params(parts.query) if parts.query else parts.query
    fragment = _mask_params(parts.fragment) if "=" in parts.fragment else parts.fragment
    return urlunsplit((parts.scheme, netloc, parts.path, query, fragment))


def _mask_unparsable(url: str) -> str:
    """A URL ``urlsplit`` rejects: hide everything between ``://`` and the last ``@``."""
    scheme, _, rest = url.partition("://")
    _, at, tail = rest.rpartition("@")
    return f"{scheme}://{MASK}@{tail}" if at else url


def mask_secrets(text: str) -> str:
    """``text`` with every URL in it passed through :func:`mask_url`, and the secret-looking
    parameters of a query quoted without its URL masked too."""
    if not text or ("://" not in text and "=" not in text):
        return text

    def masked(match: re.Match[str]) -> str:
        url = match.group(0)
        core = url.rstrip(_TRAILING)  # punctuation that ends the sentence, not the URL
        return mask_url(core) + url[len(core):]

    def masked_param(match: re.Match[str]) -> str:
        name = match.group(1)
        return f"{name}={MASK}" if _pattern(_SECRET_PARAM).search(name) else match.group(0)

    text = _pattern(_URL_IN_TEXT).sub(masked, text) if "://" in text else text
    return _pattern(_PARAM_IN_TEXT).sub(masked_param, text) if "=" in text else text


def mask_values(text: str, secrets: Iterable[str], min_length: int = 1) -> str:
    """``text`` with every occurrence of the known ``secrets`` (the key a client sent, a
    bot token) replaced by ``***``; those shorter than ``min_length`` are left (placeholders
    such as ``"x"`` would mask every x)."""
    for secret in secrets:
        if secret and len(secret) >= min_length and secret in text:
            text = text.replace(secret, MASK)
    return text


class SecretMaskingFilter(logging.Filter):
    """A logging filter that masks the URLs in a record's message and arguments. Attach it to
    a handler (``handler.addFilter(SecretMaskingFilter())``): the record is changed in place,
    so every handler after it sees the masked text too."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a broken format string is the logging module's to report
            return True
        masked = mask_secrets(message)
        if masked != message:
            record.msg, record.args = masked, None
        return True


def install_log_masking() -> None:
    """Put :class:`SecretMaskingFilter` on the handlers of this process's root logger and on
    ``logging.lastResort`` (what prints warnings when no handler is configured). Idempotent."""
    handlers = [*logging.getLogger().handlers, logging.lastResort]
    for handler in handlers:
        if handler is not None and not any(isinstance(f, SecretMaskingFilter)
                                           for f in handler.filters):
            handler.addFilter(SecretMaskingFilter())


# --- the environment of commands the agent runs ----------------------------------------
# Plugins written for Hermes Agent 0.19 read their keys from ``os.environ``, so the kernel
# exports ``$HERMES_HOME/.env`` into this process. Commands the model chooses (the terminal
# tool; later MCP servers and cron jobs) must not inherit those secrets: ``printenv`` would
# hand them to the model. :func:`command_env` is this process's environment without
#
# - every variable whose value came from ``$HERMES_HOME/.env``;
# - the key variables of the model providers (``key_env`` of every registered provider, the
#   ``key_env``/``api_key_env`` of ``fallback_providers`` entries), wherever they were set;
# - the variables plugins declare as secret in plugin.yaml (``requires_env``/``optional_env``
#   entries with ``secret: true``);
#
# except the names the caller opts in (``passthrough``: the terminal tool passes its
# ``terminal.env_passthrough`` setting).


def _names(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        return (value,) if value else ()
    if isinstance(value, (list, tuple, set, frozenset)):
        return (v for v in value if isinstance(v, str) and v)
    return ()


def secret_env_names(kernel: "Kernel") -> frozenset[str]:
    """The variables commands the agent runs must not see (before any opt-in)."""
    names: set[str] = set(kernel.dotenv_names)
    for entries in kernel.slots.providers.values():
        for entry in entries.values():
            names.update(_names(getattr(entry.obj, "key_env", ())))
    for entry in kernel.config.get("fallback_providers") or ():
        if isinstance(entry, Mapping):
            names.update(_names(entry.get("key_env")))
            names.update(_names(entry.get("api_key_env")))
    for status in kernel.plugins.values():
        manifest = status.record.manifest
        if manifest is not None:
            names.update(req.name for req in (*manifest.requires_env, *manifest.optional_env)
                         if req.secret)
    return frozenset(names)


def command_env(kernel: "Kernel", extra: Mapping[str, str] | None = None,
                passthrough: Iterable[str] | str = ()) -> dict[str, str]:
    """The environment for a command the agent runs: this process's environment without the
    secrets (see the comment above), opted-in names added from the kernel's environment
    (which includes .env) when this process lacks them, then ``extra``."""
    allowed = frozenset(_names(passthrough))
    hidden = secret_env_names(kernel) - allowed
    env = {name: value for name, value in os.environ.items() if name not in hidden}
    for name in allowed:
        if name not in env and name in kernel.env:
            env[name] = kernel.env[name]
    env.update(extra or {})
    return env

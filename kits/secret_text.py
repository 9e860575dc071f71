"""Owner: the builtin plugin `memory`.

Recognising secrets in text: in what the model or the user asks hermes to store (a memory
entry, an extracted fact), in the names of settings and variables, and in configuration text
shown to the model.

- :func:`find_secret` says what kind of secret a text seems to hold (an API key, a PEM block,
  "password is ...", credentials in a URL, a long random token), or None; :func:`looks_secret`
  is its yes/no form. Stores that reach later prompts refuse what it finds.
- :func:`is_secret_name` says whether a setting, header or variable name carries a secret
  (``api_key``, ``Authorization``, ``X-Api-Key``, ``OPENROUTER_API_KEY``, ``accessToken``).
- :func:`mask_config_text` masks the secret values of a YAML configuration (config.yaml) line
  by line, keeping its layout, comments and ``${VAR}`` references readable.

Standard library only; the patterns compile on first use.
"""

from __future__ import annotations

import re
from functools import cache

from .secrets import MASK, mask_secrets

__all__ = ["find_secret", "looks_secret", "is_secret_name", "mask_config_text"]

# Known key formats, each with what it is called in a refusal.
_FORMATS = (
    (r"\b(?:sk|pk|rk)[-_](?:live[-_]|test[-_]|proj[-_]|ant[-_]|or[-_])?[A-Za-z0-9_-]{12,}",
     "an API key"),
    (r"\b(?:ghp|gho|ghu|ghs|ghr|github_pat|glpat|xox[abprs]|hf|npm|pypi)[-_][A-Za-z0-9_-]{12,}",
     "an access token"),
    (r"\bA(?:KIA|SIA)[0-9A-Z]{16}\b", "an AWS access key"),
    (r"\bAIza[0-9A-Za-z_-]{30,}", "a Google API key"),
    (r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.", "a JSON web token"),
    (r"BEGIN [A-Z0-9 ]*PRIVATE KEY", "a private key (PEM block)"),
    (r"\b(?:bearer|basic)\s+[A-Za-z0-9._~+/=-]{16,}", "an Authorization credential"),
)
# "password is hunter2", "api key: abc", "token = ...", "密码是 ..." and the word after it.
_PHRASE = (r"(?:password|passwd|passphrase|pwd|api[ _-]?key|secret|token|credentials?|"
           r"pin code|otp|2fa code|recovery code|密码|口令|密钥)\s*(?:is|was|=|:|：|是)\s*"
           r"(?P<value>[^\s,;]*)")
# Words after "the token is" that say where a secret is, not what it is.
_NOT_A_VALUE = frozenset("""in at on under from stored kept saved set located managed
available the a an my our your their its not no none missing required needed expired
rotated revoked there here elsewhere inside""".split())
_ENV_REFERENCE = r"\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|[A-Z][A-Z0-9]*_[A-Z0-9_]+"
_LONG_TOKEN = r"[A-Za-z0-9+=]{20,}"  # one piece: "-", "_" and "/" split words

# A setting's name that carries a secret, once spelled snake_case (see is_secret_name).
_SECRET_NAME = (r"(?:^|_)(?:api_?key|key|token|secret|password|passwd|passphrase|pwd|"
                r"authorization|auth|cookie|credentials?|private_key|access_key|"
                r"client_secret|signature)$")
#: mappings whose every value is masked (HTTP headers: Authorization, X-Api-Key, Cookie...)
_SECRET_CONTAINERS = frozenset({"headers"})
_YAML_KEY = (r"^(?P<lead>\s*(?:-\s+)?)(?P<q>[\"']?)(?P<key>[^\s:#\"'{}\[\],][^:#\"'{}\[\]]*?)"
             r"(?P=q)\s*:(?:(?P<space>\s+)(?P<value>.*?))?\s*$")
_FLOW_PAIR = r"(?P<key>[\"']?[A-Za-z0-9_.\-]+[\"']?)\s*:\s*(?P<value>\"[^\"]*\"|'[^']*'|[^,}\]]+)"
_REFERENCE_VALUE = r"^[\"']?\$\{[A-Za-z_][A-Za-z0-9_]*(?::-[^}]*)?\}[\"']?$"


@cache
def _re(source: str, flags: int = 0) -> re.Pattern[str]:
    return re.compile(source, flags)


def find_secret(text: str) -> str | None:
    """What kind of secret ``text`` seems to hold ("an API key", "a private key (PEM
    block)", "credentials in a URL", ...), or None. Ordinary text passes: paths, versions,
    dates, "the token is stored in .env", "the key is GITHUB_TOKEN"."""
    if not text:
        return None
    for pattern, kind in _FORMATS:
        if _re(pattern, re.I if "bearer" in pattern else 0).search(text):
            return kind
    for match in _re(_PHRASE, re.I).finditer(text):
        value = match.group("value").strip("\"'`.")
        if value and value.lower() not in _NOT_A_VALUE and not _re(_ENV_REFERENCE).fullmatch(
                value):
            return "a password, key or token (written as 'password is ...')"
    if mask_secrets(text) != text:
        return "credentials in a URL"
    for token in _re(_LONG_TOKEN).findall(text):
        if _re(r"[A-Za-z]").search(token) and _re(r"\d").search(token):
            return "a long random-looking token"
    return None


def looks_secret(text: str) -> bool:
    """Whether ``text`` seems to hold a credential (see :func:`find_secret`)."""
    return find_secret(text) is not None


def is_secret_name(name: str) -> bool:
    """Whether a setting, header or variable called ``name`` carries a secret: ``api_key``,
    ``token``, ``password``, ``Authorization``, ``X-Api-Key``, ``apiKey``,
    ``OPENROUTER_API_KEY``, ``client_secret``... (``key_env``, ``max_tokens`` do not)."""
    snake = _re(r"(?<=[a-z0-9])(?=[A-Z])").sub("_", name.strip().strip("\"'"))
    snake = _re(r"[\s.\-]+").sub("_", snake).lower()
    return bool(snake) and _re(_SECRET_NAME).search(snake) is not None


def _masked_value(value: str) -> str:
    """``***`` in the quotes ``value`` had."""
    quote = value[:1] if value[:1] in "\"'" and value.endswith(value[:1]) and len(value) > 1 \
        else ""
    return f"{quote}{MASK}{quote}"


def _mask_flow(text: str, every: bool) -> str:
    """The values of a flow mapping (``{Authorization: Bearer x, model: m}``) masked: all
    (``every``) or those under secret names."""
    def pair(match: re.Match[str]) -> str:
        key, value = match.group("key"), match.group("value").strip()
        if not (every or is_secret_name(key)) or _re(_REFERENCE_VALUE).match(value):
            return match.group(0)
        return f"{key}: {_masked_value(value)}"

    return _re(_FLOW_PAIR).sub(pair, text)


def _mask_known(line: str) -> str:
    """Known key formats and URL credentials masked anywhere in ``line`` (comments too)."""
    for pattern, _ in _FORMATS:
        line = _re(pattern, re.I if "bearer" in pattern else 0).sub(MASK, line)
    return mask_secrets(line)


def mask_config_text(text: str) -> str:
    """``text`` (YAML) with the values of secret-named keys (see :func:`is_secret_name`), of
    every key under ``headers``, of block scalars under such keys, and known key formats or
    URL credentials anywhere (also in comments) replaced by ``***``. Layout, comments, other
    values and ``${VAR}`` references stay as written."""
    out: list[str] = []
    parents: list[tuple[int, str]] = []  # (indent, key) of the mappings the line is inside
    block: int | None = None  # inside a masked block scalar: the indent of its key
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\r\n")
        ending = line[len(body):]
        indent = len(body) - len(body.lstrip())
        if block is not None:
            if not body.strip() or indent > block:
                out.append((body[:indent] + MASK if body.strip() else body) + ending)
                continue
            block = None
        match = _re(_YAML_KEY).match(body) if not body.lstrip().startswith("#") else None
        if match is None:
            if body.lstrip().startswith("- ") and any(k in _SECRET_CONTAINERS
                                                       for _, k in parents):
                body = body[:body.index("- ") + 2] + MASK  # a header given as a list item
            out.append(_mask_known(body) + ending)
            continue
        level = len(match.group("lead"))
        while parents and parents[-1][0] >= level:
            parents.pop()
        key, value = match.group("key"), match.group("value") or ""
        if value.startswith("#"):
            value = ""
        secret = is_secret_name(key) or any(k in _SECRET_CONTAINERS for _, k in parents)
        if not value:
            parents.append((level, key.lower()))
        elif value[:1] in "|>":
            if secret:
                block = level
        elif value[:1] in "{[":
            body = body[:match.start("value")] + _mask_flow(
                value, secret or key.lower() in _SECRET_CONTAINERS)
        elif secret and not _re(_REFERENCE_VALUE).match(value.split(" #")[0].strip()):
            body = body[:match.start("value")] + _masked_value(value.split(" #")[0].strip())
        out.append(_mask_known(body) + ending)
    return "".join(out)

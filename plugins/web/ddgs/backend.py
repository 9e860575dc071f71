"""Search through ``ddgs.DDGS().text``: its rows (``title``, ``href``, ``body``) as
:class:`WebResult`, its rate-limit and timeout exceptions as :class:`WebError`."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from hermes_agent.api import WebBackend, WebError, WebResult

INSTALL = "pip install 'hermes-agent-runtime[web-ddgs]'"
DEFAULTS: dict[str, Any] = {"region": "us-en", "safesearch": "moderate", "timeout": 10,
                            "engines": "auto", "proxy": "", "ca_file": ""}
MAX_RESULTS = 50


class DDGSBackend(WebBackend):
    """``settings``: the plugin's ``plugins.entries.ddgs`` (``region``, ``safesearch``,
    ``timeout``, ``engines``, ``proxy``, ``ca_file``); ``client``: the ``DDGS`` class or a
    stand-in taking ``proxy=``, ``timeout=`` and ``verify=`` (default: the ddgs package's)."""

    def __init__(self, settings: Mapping[str, Any] | None = None,
                 client: Callable[..., Any] | None = None):
        self.settings = {**DEFAULTS, **{k: v for k, v in (settings or {}).items()
                                        if k in DEFAULTS and v not in (None, "")}}
        self._client = client

    @property
    def name(self) -> str:
        return "ddgs"

    def is_available(self) -> bool:
        return self._client is not None or _installed()

    def unavailable_reason(self) -> str:
        return "" if self.is_available() else \
            f"its library ddgs is not installed; install it with {INSTALL}"

    def search(self, query: str, limit: int = 5, **options: Any) -> list[WebResult]:
        ddgs_class = self._client or _ddgs_class()
        limit = max(1, min(int(limit), MAX_RESULTS))
        rate_limited, timed_out, failed = _exception_types()
        try:
            client = ddgs_class(proxy=self.settings["proxy"] or None,  # None: $DDGS_PROXY
                                timeout=max(1, round(float(self.settings["timeout"]))),
                                verify=str(self.settings["ca_file"]) or True)
            rows = client.text(
                query, max_results=limit, region=options.get("region", self.settings["region"]),
                safesearch=self.settings["safesearch"], timelimit=options.get("timelimit"),
                backend=self.settings["engines"])
        except rate_limited as exc:
            raise WebError(f"DuckDuckGo is rate-limiting this address ({exc}); wait a minute "
                           "before searching again, or set web.search_backend to a backend "
                           "with a key", "rate_limited") from exc
        except timed_out as exc:
            raise WebError(f"DuckDuckGo did not answer within {self.settings['timeout']}s "
                           f"({exc}); try again, or raise plugins.entries.ddgs.timeout",
                           "timeout") from exc
        except failed as exc:
            if "no results found" in str(exc).lower():
                return []
            raise WebError(f"the DuckDuckGo search failed ({exc}); try again later",
                           "unreachable") from exc
        if not isinstance(rows, list):
            raise WebError(f"ddgs returned {type(rows).__name__}, not a list of results; "
                           f"update it ({INSTALL} --upgrade)", "malformed")
        return [WebResult(title=str(row.get("title") or ""), url=str(row["href"]),
                          snippet=str(row.get("body") or ""), source=self.name)
                for row in rows if isinstance(row, dict) and row.get("href")][:limit]

    def get_config_schema(self) -> list[dict[str, Any]]:
        return [
            {"key": "region", "description": "results' region, e.g. us-en, uk-en, de-de",
             "default": DEFAULTS["region"]},
            {"key": "safesearch", "description": "on, moderate or off",
             "default": DEFAULTS["safesearch"]},
            {"key": "timeout", "description": "seconds to wait for results",
             "default": DEFAULTS["timeout"]},
            {"key": "engines", "description": "ddgs backends (comma-separated) or auto",
             "default": DEFAULTS["engines"]},
            {"key": "proxy", "description": "proxy URL (http://, https://, socks5://); "
             "default: $DDGS_PROXY, else none", "default": DEFAULTS["proxy"]},
            {"key": "ca_file", "description": "PEM file of the certificate authorities to "
             "trust (e.g. a TLS-inspecting proxy's); default: the system's", "default": DEFAULTS["ca_file"]},
        ]


def _installed() -> bool:
    from importlib.util import find_spec

    try:
        return find_spec("ddgs") is not None
    except ValueError:
        return False


def _ddgs_class() -> Any:
    try:
        from ddgs import DDGS
    except ImportError as exc:
        raise WebError(f"the ddgs backend needs the ddgs package ({exc}); install it with "
                       f"{INSTALL}", "unsupported") from exc
    return DDGS


def _exception_types() -> tuple[type[BaseException], type[BaseException], type[BaseException]]:
    """ddgs' (rate limit, timeout, any failure) exceptions; none match without the package."""
    try:
        from ddgs.exceptions import DDGSException, RatelimitException, TimeoutException
    except ImportError:
        return _Never, _Never, _Never
    return RatelimitException, TimeoutException, DDGSException


class _Never(Exception):
    """Raised by nothing: stands for ddgs' exceptions when the package is absent."""

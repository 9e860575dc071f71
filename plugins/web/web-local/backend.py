"""The local extractor: fetch each page safely, convert it to markdown. One failed page is an
error page, never a failed call."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from hermes_agent.api import WebBackend, WebError, WebPage
from hermes_agent.kits.http import fetch

from .convert import INSTALL, to_markdown, trafilatura_available

DEFAULTS = {"timeout": 20.0, "max_bytes": 5_000_000, "max_redirects": 5, "parallel": 4}


class LocalExtractor(WebBackend):
    """``web.extract_backend: local``. ``settings``: the plugin's ``plugins.entries`` mapping
    (``timeout``, ``max_bytes``, ``max_redirects``, ``parallel``); ``allow_private``: read at
    each call (``web.allow_private_networks``); ``fetch_options``: passed to every fetch (a
    test's ``resolve``/``allowed_hosts``)."""

    def __init__(self, settings: Mapping[str, Any] | None = None,
                 allow_private: Callable[[], bool] = lambda: False,
                 **fetch_options: Any):
        self.settings = {**DEFAULTS, **{k: v for k, v in (settings or {}).items()
                                        if k in DEFAULTS and isinstance(v, (int, float))}}
        self._allow_private = allow_private
        self._fetch_options = fetch_options

    @property
    def name(self) -> str:
        return "local"

    def is_available(self) -> bool:
        return trafilatura_available()

    def unavailable_reason(self) -> str:
        return "" if trafilatura_available() else \
            f"its library trafilatura is not installed; install it with {INSTALL}"

    def extract(self, urls: list[str], **options: Any) -> list[WebPage]:
        if not trafilatura_available():
            raise WebError(f"the local extractor needs trafilatura; install it with {INSTALL}",
                           "unsupported")
        allow_private = bool(self._allow_private())
        workers = max(1, min(int(self.settings["parallel"]), len(urls)))
        if workers == 1:
            return [self._page(url, allow_private) for url in urls]
        with ThreadPoolExecutor(workers, thread_name_prefix="web-local") as pool:
            return list(pool.map(lambda url: self._page(url, allow_private), urls))

    def _page(self, url: str, allow_private: bool) -> WebPage:
        try:
            fetched = fetch(url, allow_private=allow_private,
                            timeout=float(self.settings["timeout"]),
                            max_bytes=int(self.settings["max_bytes"]),
                            max_redirects=int(self.settings["max_redirects"]),
                            **self._fetch_options)
            if fetched.status >= 400:
                return WebPage(fetched.url, status="error",
                               error=f"{fetched.url} answered HTTP {fetched.status}; check the "
                                     "URL, or try again later if it is a server error")
            title, markdown = to_markdown(fetched)
        except WebError as exc:
            return WebPage(url, status="error", error=str(exc))
        if not markdown:
            return WebPage(fetched.url, title, status="error",
                           error=f"{fetched.url} has no readable text (a page built by "
                                 "scripts?); try a search backend's extract instead")
        return WebPage(fetched.url, title, markdown)

    def get_config_schema(self) -> list[dict[str, Any]]:
        return [
            {"key": "timeout", "description": "seconds for one page, redirects and host name "
                                              "lookups included", "default": DEFAULTS["timeout"]},
            {"key": "max_bytes", "description": "largest page body read (bytes)",
             "default": DEFAULTS["max_bytes"]},
            {"key": "max_redirects", "description": "redirects followed per page",
             "default": DEFAULTS["max_redirects"]},
            {"key": "parallel", "description": "pages fetched at once",
             "default": DEFAULTS["parallel"]},
        ]

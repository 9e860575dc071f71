"""Owner: the builtin plugin `web`.

The base class of backends that call one service's JSON API over :class:`WebHTTP`."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from hermes_agent.api import WebBackend, WebError

from ..secrets import mask_url
from .client import WebHTTP, WebService, http_options

__all__ = ["HTTPWebBackend"]


class HTTPWebBackend(WebBackend):
    """A backend that calls one service's JSON API: set :attr:`service` (and
    :attr:`default_url` when the service has one), add the auth headers in
    :meth:`auth_headers`, special errors in :meth:`explain`, and call :meth:`call`.

    The key comes from ``service.key_env`` and the base URL from ``service.url_env`` (else
    ``default_url``); the timeouts and retries from ``plugins.entries.<name>``
    (:func:`http_options`). The HTTP client opens on the first call."""

    service: WebService
    default_url: str = ""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        service = cls.__dict__.get("service")
        if service is not None and "env_vars" not in cls.__dict__:
            cls.env_vars = tuple(v for v in (service.key_env, service.url_env) if v)

    def __init__(self, env: Mapping[str, str], config: Mapping[str, Any] | None = None, *,
                 sleep: Callable[[float], None] = time.sleep):
        key_env, url_env = self.service.key_env, self.service.url_env
        self.api_key = str(env.get(key_env) or "").strip() if key_env else ""
        self.base_url = (str(env.get(url_env) or "").strip() if url_env else "") or \
            self.default_url
        self.base_url = self.base_url.rstrip("/")
        self.config: dict[str, Any] = dict(config or {})
        self._sleep = sleep
        self._http: WebHTTP | None = None
        self._opening = threading.Lock()

    def is_available(self) -> bool:
        return bool(self.api_key) if self.service.key_env else bool(self.base_url)

    def unavailable_reason(self) -> str:
        service = self.service
        if self.is_available():
            return ""
        if service.key_env:
            return (f"{service.key_env} is not set; get a key at {service.key_url} and set it "
                    "in the environment or $HERMES_HOME/.env")
        return (f"{service.url_env} is not set; set it to the base URL of your "
                f"{service.label} server in the environment or $HERMES_HOME/.env")

    def option(self, options: Mapping[str, Any], key: str, default: Any = None) -> Any:
        """A call's option, else the backend's setting of that name, else ``default``."""
        value = options.get(key)
        return self.config.get(key, default) if value is None else value

    def int_option(self, options: Mapping[str, Any], key: str, low: int,
                   high: int | None = None) -> int | None:
        """:meth:`option` as a whole number from ``low`` to ``high``, or None when unset;
        :class:`WebError` saying the range when it is not one."""
        value = self.option(options, key)
        if value is None or value == "":
            return None
        try:
            number = int(value)
            if isinstance(value, bool) or number != float(value):
                raise ValueError(value)
        except (TypeError, ValueError):
            number = low - 1
        if number < low or (high is not None and number > high):
            span = f"from {low} to {high}" if high is not None else f"of at least {low}"
            raise WebError(f"{self.service.label}'s {key} is a whole number {span}, not "
                           f"{value!r}", "http")
        return number

    def auth_headers(self) -> dict[str, str]:
        return {}

    def explain(self, status: int, body: Any, detail: str) -> WebError | None:
        """This service's own error for an HTTP error answer, or None for the usual one."""
        return None

    def call(self, method: str, path: str, *, params: Mapping[str, Any] | None = None,
             json_body: Any = None) -> dict[str, Any]:
        """The JSON object the service answers; :class:`WebError` when it fails, is not
        configured, or answers something other than an object."""
        service = self.service
        if not self.is_available():
            raise WebError(self.unavailable_reason(), "missing_key")
        with self._opening:
            if self._http is None:
                self._http = WebHTTP(replace(service, plugin=self.name), self.base_url,
                                     headers=self.auth_headers(), secrets=(self.api_key,),
                                     explain=self.explain, sleep=self._sleep,
                                     **http_options(self.config))
            http = self._http
        data = http.request_json(method, path, params=params, json_body=json_body)
        if not isinstance(data, dict):
            raise WebError(f"{service.label} answered {method} {path} with something other "
                           f"than a JSON object; is {mask_url(self.base_url)} its API?",
                           "malformed")
        return data

    def close(self) -> None:
        with self._opening:
            http, self._http = self._http, None
        if http is not None:
            http.close()

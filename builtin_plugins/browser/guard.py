"""Every request the browser makes passes the web SSRF policy (``hermes_agent.kits.http``'s
``check_url``, as ``web_extract`` uses it): http(s) only, public addresses only unless
``browser.allow_private_networks`` / ``web.allow_private_networks``, or the host is in
``browser.allowed_hosts``. Navigations are checked before they start; every request the page
then makes (subresources, redirects, fetch/XHR, websockets) is intercepted and aborted when
refused. The host's addresses are checked when the request starts; a name that changes its
answer between that check and Chromium's own lookup (DNS rebinding) is not caught."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urljoin

from hermes_agent.api import WebError
from hermes_agent.kits.http import check_url

log = logging.getLogger("hermes_agent.browser")

MAX_REDIRECTS = 10
REDIRECT_HEADER = "x-hermes-redirect"  # on the page that goes on to a checked redirect target

#: schemes a page may use without a network request (nothing to check)
LOCAL_SCHEMES = ("data:", "blob:", "about:", "chrome-error:")


class Refused(Exception):
    """A request (or one of its redirects) the policy refuses."""


def hop_page(target: str) -> bytes:
    """A page that goes on to ``target`` at once (its own request is checked again)."""
    quoted = json.dumps(target).replace("<", "\\u003c")
    return (f"<!doctype html><title>Redirecting</title><script>location.replace({quoted})"
            "</script>").encode()


@dataclass
class RequestGuard:
    allow_private: bool
    allowed_hosts: Collection[str] = ()
    timeout: float = 10.0  # seconds a lookup may take
    refused: list[tuple[str, str]] = field(default_factory=list)  # (url, why), newest last

    def check(self, url: str) -> None:
        """Raise :class:`WebError` (kind ``refused``, or ``unreachable``) unless allowed."""
        check_url(url, allow_private=self.allow_private, allowed_hosts=self.allowed_hosts,
                  deadline=time.monotonic() + self.timeout)

    async def verdict(self, url: str) -> str | None:
        """None when ``url`` may be fetched, else why not (recorded in :attr:`refused`)."""
        if url.startswith(LOCAL_SCHEMES):
            return None
        try:
            await asyncio.to_thread(self.check, url)
        except WebError as exc:
            self.refused.append((url, str(exc)))
            del self.refused[:-20]
            return str(exc)
        return None

    async def route(self, route: Any) -> None:
        """The context's ``route("**/*")`` handler."""
        request = route.request
        why = await self.verdict(request.url)
        if why is not None:
            log.info("browser: refused %s (%s)", request.url, why)
            await route.abort("blockedbyclient")
            return
        try:
            response = await self._follow(route)
        except Refused:
            await route.abort("blockedbyclient")
            return
        except Exception as exc:
            log.info("browser: fetching %s failed: %s", request.url, exc)
            await route.abort("failed")
            return
        if isinstance(response, str):  # a navigation redirected to this checked target
            await route.fulfill(status=200, content_type="text/html; charset=utf-8",
                                headers={REDIRECT_HEADER: response}, body=hop_page(response))
        else:
            await route.fulfill(response=response)

    async def _follow(self, route: Any) -> Any:
        """The response to give the page: each redirect hop is checked before it is fetched.
        A navigation that redirects gets a page that goes on to the target itself (the
        target's request is then intercepted and checked like any other, and the page's
        address is right); a subresource's redirects are followed here."""
        request = route.request
        response = await route.fetch(max_redirects=0)
        url = request.url
        for _ in range(MAX_REDIRECTS):
            location = response.headers.get("location")
            if not (300 <= response.status < 400 and location):
                return response
            target = urljoin(url, location)
            why = await self.verdict(target)
            if why is not None:
                log.info("browser: refused the redirect of %s to %s (%s)", url, target, why)
                raise Refused(why)
            if request.is_navigation_request():
                return target
            keep = response.status in (307, 308)
            response = await route.fetch(url=target, max_redirects=0,
                                         method=None if keep else "GET",
                                         post_data=None if not keep else request.post_data_buffer)
            url = target
        raise Refused(f"more than {MAX_REDIRECTS} redirects")

    async def websocket(self, ws: Any) -> None:
        """The context's ``route_web_socket("**/*")`` handler."""
        url = str(ws.url)
        probe = "http" + url[2:] if url.startswith("ws") else url
        if await self.verdict(probe) is not None:
            await ws.close(code=1008, reason="refused by hermes (SSRF policy)")
            return
        ws.connect_to_server()


def guard_for(settings: Any, config: Any) -> RequestGuard:
    """The policy ``browser`` settings (and ``web.allow_private_networks``) give."""
    return RequestGuard(settings.private_allowed(config),
                        tuple(str(h).lower().rstrip(".") for h in settings.allowed_hosts))

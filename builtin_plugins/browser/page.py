"""One agent session's browser: its context, the page the model looks at (a page the site
opens, a popup, becomes the current one), the console messages, the refs of the last
snapshot, and the actions the tools run on it, one at a time."""

from __future__ import annotations

import asyncio
import base64
import secrets
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

from hermes_agent.api.browser import BrowserLaunch, BrowserProvider

from .guard import MAX_REDIRECTS, REDIRECT_HEADER, RequestGuard
from .settings import BrowserSettings
from .snapshot import WALKER, Snapshot, ref_selector, render

IMAGES = r"""
(limit) => Array.from(document.images).filter((img) => img.currentSrc || img.src)
  .slice(0, limit).map((img) => ({src: img.currentSrc || img.src, alt: img.alt || '',
    width: img.naturalWidth, height: img.naturalHeight}))
"""
QUIET = 0.25  # seconds without a request in flight: the page has rendered
SETTLE_MAX = 3.0  # seconds a page is given to go quiet
NAVIGATION_WAIT = 0.2  # seconds a click or key has to start a navigation
SCROLL = "(dy) => { window.scrollBy(0, dy * window.innerHeight * 0.8); return window.scrollY; }"


class ActionError(Exception):
    """A browser action the model asked for that cannot be done, with what to do instead."""

    def __init__(self, message: str, kind: str = "browser_error"):
        super().__init__(message)
        self.kind = kind


class PageSession:
    def __init__(self, context: Any, browser: Any, provider: BrowserProvider,
                 launch: BrowserLaunch, guard: RequestGuard, settings: BrowserSettings):
        self.context = context
        self.browser = browser  # None for a local launch (the context owns the process)
        self.provider = provider
        self.launch = launch
        self.guard = guard
        self.settings = settings
        self.page: Any = None
        self.console: deque[dict[str, str]] = deque(maxlen=settings.console_entries)
        self.attr = f"data-hermes-{secrets.token_hex(4)}"  # the page cannot guess it
        self.lock = asyncio.Lock()
        self.closed = False
        self.last_used = asyncio.get_running_loop().time()
        self.in_flight: set[Any] = set()  # the context's requests not answered yet

    @property
    def ms(self) -> float:
        return self.settings.command_timeout * 1000

    async def start(self) -> None:
        self.context.on("request", lambda request: self.in_flight.add(request))
        self.context.on("requestfinished", lambda request: self.in_flight.discard(request))
        self.context.on("requestfailed", lambda request: self.in_flight.discard(request))
        await self.context.route("**/*", self.guard.route)
        route_ws = getattr(self.context, "route_web_socket", None)
        if route_ws is not None:
            await route_ws("**/*", self.guard.websocket)
        self.context.on("page", self._adopt)
        self._adopt(self.context.pages[0] if self.context.pages else await self.context.new_page())

    def _adopt(self, page: Any) -> None:
        """``page`` becomes the current page; its console is recorded."""
        self.page = page
        page.on("console", lambda msg: self.console.append(
            {"type": msg.type, "text": msg.text[:2000], "url": page.url}))
        page.on("pageerror", lambda err: self.console.append(
            {"type": "error", "text": str(err)[:2000], "url": page.url}))
        page.on("close", lambda _: self._fallback(page))

    def _fallback(self, closed: Any) -> None:
        if self.page is closed:
            open_pages = [p for p in self.context.pages if not p.is_closed()]
            self.page = open_pages[-1] if open_pages else None

    async def current(self) -> Any:
        if self.page is None or self.page.is_closed():
            self._adopt(await self.context.new_page())
        return self.page

    # --- actions --------------------------------------------------------------------------
    async def navigate(self, url: str) -> dict[str, Any]:
        why = await self.guard.verdict(url)
        if why is not None:
            raise ActionError(private_hint(why), "refused")
        page = await self.current()
        refusals = len(self.guard.refused)
        documents: list[Any] = []  # the main frame's responses: a redirect's hop page, ...

        def seen(response: Any) -> None:
            if response.frame == page.main_frame and response.request.is_navigation_request():
                documents.append(response)

        page.on("response", seen)
        try:
            response = await page.goto(url, wait_until="load", timeout=self.ms)
            for _ in range(MAX_REDIRECTS):  # a checked redirect goes on from the guard's page
                target = response.headers.get(REDIRECT_HEADER) if response else None
                if not target:
                    break
                await page.wait_for_url(lambda now, to=target: now == to, wait_until="load",
                                        timeout=self.ms)
                response = next((r for r in reversed(documents) if r.url == target), None)
        except Exception as exc:
            if len(self.guard.refused) > refusals:  # a redirect to a refused address
                await self.error_page_shown(page)
                why = private_hint(self.guard.refused[-1][1])
                raise ActionError(f"the page redirected to {self.guard.refused[-1][0]}, which "
                                  f"is refused: {why}", "refused") from exc
            raise ActionError(f"could not open {url}: {first_line(exc)}", "navigation") from exc
        finally:
            page.remove_listener("response", seen)
        await self.settle(page)
        shot = await self.snapshot(full=False)
        return {"url": page.url, "title": await page.title(),
                "status": response.status if response is not None else None,
                "snapshot": shot.text, "element_count": shot.refs,
                **({"truncated": True} if shot.truncated else {})}

    async def error_page_shown(self, page: Any) -> None:
        """Wait until Chromium shows its error page for the refused request (it commits a
        moment after the refusal; a navigation started before would be cut short by it)."""
        try:
            await page.wait_for_url(lambda now: now.startswith("chrome-error:"),
                                    timeout=min(3000, self.ms))
        except Exception:
            pass

    async def settle(self, page: Any) -> None:
        """Give the page's scripts a moment to render: until no request has been in flight
        for :data:`QUIET` seconds, at most :data:`SETTLE_MAX` (a page that keeps polling
        never goes quiet: it is taken as it is then)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + min(SETTLE_MAX, self.settings.command_timeout)
        quiet_since = loop.time()
        while loop.time() < deadline:
            if self.in_flight:
                quiet_since = loop.time()
            elif loop.time() - quiet_since >= QUIET:
                return
            await asyncio.sleep(0.025)

    async def snapshot(self, full: bool = False) -> Snapshot:
        page = await self.current()
        found = await page.evaluate(WALKER, [self.attr, bool(full)])
        return render(list(found.get("lines") or []), int(found.get("refs") or 0),
                      self.settings.snapshot_char_limit)

    async def element(self, ref: str) -> Any:
        selector = ref_selector(self.attr, str(ref))
        if selector is None:
            raise ActionError(f"{ref!r} is not an element ref; refs look like @e5 and come "
                              "from the latest browser_snapshot", "invalid")
        locator = (await self.current()).locator(selector)
        if await locator.count() == 0:
            raise ActionError(f"no element {ref} on the page now (the page changed since the "
                              "snapshot); take a new browser_snapshot and use its refs",
                              "stale_ref")
        return locator.first

    async def acting(self, page: Any, action: Callable[[], Awaitable[Any]]) -> dict[str, Any]:
        """Run ``action`` (a click, a key) and wait for what it started: a navigation (its
        request seen within :data:`NAVIGATION_WAIT`, its document committed and loaded), then quiet network."""
        before = page.url
        started, committed = asyncio.Event(), asyncio.Event()

        def request(req: Any) -> None:
            if req.is_navigation_request() and req.frame == page.main_frame:
                started.set()

        def navigated(frame: Any) -> None:
            if frame == page.main_frame:
                committed.set()

        page.on("request", request)
        page.on("framenavigated", navigated)
        try:
            await action()
            await wait_for(started, NAVIGATION_WAIT)
            if started.is_set():
                await wait_for(committed, self.settings.command_timeout)
                try:
                    await page.wait_for_load_state("load", timeout=self.ms)
                except Exception:
                    pass
        finally:
            page.remove_listener("request", request)
            page.remove_listener("framenavigated", navigated)
        await self.settle(page)
        page = await self.current()
        answer: dict[str, Any] = {"url": page.url, "title": await page.title()}
        if page.url != before or committed.is_set():
            answer["navigated"] = True
        return answer

    async def click(self, ref: str) -> dict[str, Any]:
        target = await self.element(ref)

        async def click() -> None:
            try:
                await target.click(timeout=self.ms)
            except Exception as exc:
                raise ActionError(f"could not click {ref}: {first_line(exc)}", "action") from exc

        return {"clicked": ref, **await self.acting(self.page, click)}

    async def type(self, ref: str, text: str) -> dict[str, Any]:
        target = await self.element(ref)
        try:
            await target.fill(text, timeout=self.ms)
        except Exception as exc:
            raise ActionError(f"could not type into {ref}: {first_line(exc)} (is it a text "
                              "field? take a new snapshot)", "action") from exc
        return {"typed": text, "into": ref}

    async def press(self, key: str) -> dict[str, Any]:
        page = await self.current()

        async def press() -> None:
            try:
                await page.keyboard.press(key)
            except Exception as exc:
                raise ActionError(f"could not press {key!r}: {first_line(exc)} (keys are "
                                  "named like Enter, Tab, Escape, ArrowDown, Control+a)",
                                  "invalid") from exc

        return {"pressed": key, **await self.acting(page, press)}

    async def scroll(self, direction: str) -> dict[str, Any]:
        page = await self.current()
        offset = await page.evaluate(SCROLL, -1 if direction == "up" else 1)
        return {"scrolled": direction, "scroll_y": offset}

    async def back(self) -> dict[str, Any]:
        page = await self.current()
        response = await page.go_back(wait_until="load", timeout=self.ms)
        if response is None and page.url in ("about:blank", ""):
            raise ActionError("there is no page to go back to", "no_history")
        await self.settle(page)
        return {"url": page.url, "title": await page.title()}

    async def images(self, limit: int = 50) -> dict[str, Any]:
        page = await self.current()
        found = await page.evaluate(IMAGES, limit)
        return {"url": page.url, "images": found, "count": len(found)}

    async def console_messages(self, clear: bool, expression: str) -> dict[str, Any]:
        page = await self.current()
        answer: dict[str, Any] = {"url": page.url, "messages": list(self.console)}
        if clear:
            self.console.clear()
        if expression:
            try:
                value = await page.evaluate(expression)
            except Exception as exc:
                answer["error"] = f"the expression failed: {first_line(exc)}"
            else:
                answer["result"] = value
        return answer

    async def screenshot(self, path: str) -> dict[str, Any]:
        page = await self.current()
        data = await page.screenshot(path=path, full_page=False, timeout=self.ms)
        return {"url": page.url, "title": await page.title(), "path": path,
                "base64": base64.b64encode(data).decode("ascii")}

    async def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        try:
            await self.context.close()
            if self.browser is not None:
                await self.browser.close()
        finally:
            await asyncio.to_thread(self.provider.close_session, self.launch.session_id)


async def wait_for(event: asyncio.Event, seconds: float) -> None:
    try:
        await asyncio.wait_for(event.wait(), seconds)
    except (asyncio.TimeoutError, TimeoutError):
        pass


def first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return (text[0] if text else type(exc).__name__)[:300]


def private_hint(why: str) -> str:
    """The SSRF refusal, naming the browser's own switch."""
    return why.replace("set web.allow_private_networks: true", "set "
                       "browser.allow_private_networks: true (or list the host in "
                       "browser.allowed_hosts)")

"""One Playwright for the process, driven on a thread of its own (Playwright objects belong
to the event loop that made them; tool calls arrive on the agent's threads), and one browser
session per agent session, opened on first use by the selected provider and closed with the
agent session (``on_session_finalize``) or at shutdown. Playwright is imported here, on first
use, never at start-up."""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
from collections.abc import Awaitable, Callable, Coroutine
from typing import TYPE_CHECKING, Any, TypeVar

from hermes_agent.api.browser import BrowserLaunch, BrowserProvider

from .guard import guard_for
from .page import PageSession
from .settings import BrowserSettings

if TYPE_CHECKING:
    from hermes_agent import Kernel

log = logging.getLogger("hermes_agent.browser")
T = TypeVar("T")
INSTALL_EXTRA = ("the browser tools need Playwright for Python: pip install "
                 "'hermes-agent-runtime[browser]' (and a Chromium: apt-get install chromium)")


class BrowserFailure(Exception):
    """A browser action that failed, with the fix; ``kind`` for the tool's error."""

    def __init__(self, message: str, kind: str = "browser_error"):
        super().__init__(message)
        self.kind = kind


class BrowserRuntime:
    """The browser sessions of one kernel."""

    def __init__(self, kernel: "Kernel", providers: Callable[[BrowserSettings],
                                                               tuple[str, BrowserProvider]]):
        self.kernel = kernel
        self.select = providers
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._playwright: Any = None
        self._sessions: dict[str, PageSession] = {}
        self._opening: dict[str, asyncio.Future[PageSession]] = {}
        self._reaper: asyncio.Task[None] | None = None

    # --- the loop thread ----------------------------------------------------------------
    def _loop_running(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, name="hermes-browser",
                                          daemon=True)
                thread.start()
                self._loop, self._thread = loop, thread
            return self._loop

    def run(self, work: Coroutine[Any, Any, T], timeout: float,
            interrupt: threading.Event | None = None) -> T:
        """Run ``work`` on the browser's loop; :class:`BrowserFailure` past ``timeout``
        seconds or when ``interrupt`` is set (the work is cancelled)."""
        future = asyncio.run_coroutine_threadsafe(work, self._loop_running())
        waited = 0.0
        while True:
            step = min(0.2, max(timeout - waited, 0.01))
            try:
                return future.result(step)
            except concurrent.futures.TimeoutError:
                waited += step
                if interrupt is not None and interrupt.is_set():
                    future.cancel()
                    raise BrowserFailure("interrupted", "interrupted") from None
                if waited >= timeout:
                    future.cancel()
                    raise BrowserFailure(
                        f"the browser did not finish within {timeout:g}s (browser."
                        "command_timeout); the page may be slow: try again or raise it",
                        "timeout") from None

    # --- sessions -----------------------------------------------------------------------
    async def session(self, key: str, settings: BrowserSettings) -> PageSession:
        """The session of agent session ``key``, opened on first use (once, also when two
        calls ask at the same time)."""
        found = self._sessions.get(key)
        if found is not None and not found.closed:
            found.last_used = asyncio.get_running_loop().time()
            self._reap_later(settings.idle_timeout)
            return found
        pending = self._opening.get(key)
        if pending is not None:
            return await asyncio.shield(pending)
        future: asyncio.Future[PageSession] = asyncio.get_running_loop().create_future()
        self._opening[key] = future
        try:
            opened = await self._open(key, settings)
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # retrieved: nobody else may be waiting
            raise
        finally:
            self._opening.pop(key, None)
        self._sessions[key] = opened
        self._reap_later(settings.idle_timeout)
        future.set_result(opened)
        return opened

    def missing(self, settings: BrowserSettings) -> BrowserFailure | None:
        """What keeps a browser from opening here (Playwright, the provider), else None."""
        from . import playwright_missing

        if playwright_missing():
            return BrowserFailure(INSTALL_EXTRA, "missing_dependency")
        try:
            name, provider = self.select(settings)
        except BrowserFailure as failure:
            return failure
        if provider.is_available():
            return None
        explain = getattr(provider, "unavailable_reason", None)
        reason = (explain() if callable(explain) else "") or "it is not configured"
        kind = "missing_dependency" if "apt-get install" in reason else "unavailable"
        return BrowserFailure(f"browser provider {name!r} cannot open a browser: {reason}", kind)

    def _reap_later(self, idle: float) -> None:
        """Start the task that closes browsers unused for ``idle`` seconds (once)."""
        if idle <= 0 or (self._reaper is not None and not self._reaper.done()):
            return
        self._reaper = asyncio.get_running_loop().create_task(self._reap(idle))

    async def _reap(self, idle: float) -> None:
        loop = asyncio.get_running_loop()
        while self._sessions:
            await asyncio.sleep(min(30.0, max(idle / 2, 0.05)))
            for key, session in list(self._sessions.items()):
                if session.lock.locked() or loop.time() - session.last_used < idle:
                    continue
                self._sessions.pop(key, None)
                log.info("browser: closing the browser of %s (unused for %gs: "
                         "browser.idle_timeout)", key, idle)
                try:
                    await session.close()
                except Exception as exc:
                    log.warning("browser: closing the idle browser of %s: %s", key, exc)

    async def _start_playwright(self) -> Any:
        if self._playwright is None:
            from . import playwright_missing

            if playwright_missing():
                raise BrowserFailure(INSTALL_EXTRA, "missing_dependency")
            from playwright.async_api import async_playwright

            self._playwright = await async_playwright().start()
        return self._playwright

    async def _open(self, key: str, settings: BrowserSettings) -> PageSession:
        playwright = await self._start_playwright()
        missing = self.missing(settings)
        if missing is not None:
            raise missing
        name, provider = self.select(settings)
        launch = as_launch(await asyncio.to_thread(provider.create_session, key))
        ms = settings.command_timeout * 1000
        browser = None
        try:
            if launch.cdp_url:
                browser = await playwright.chromium.connect_over_cdp(
                    launch.cdp_url, headers=dict(launch.headers) or None, timeout=ms)
                try:
                    context = await browser.new_context()
                except Exception:  # an endpoint that offers its one context only
                    context = browser.contexts[0]
            else:
                context = await playwright.chromium.launch_persistent_context(
                    launch.user_data_dir, executable_path=launch.executable,
                    args=list(launch.args), headless=True, timeout=ms)
        except Exception as exc:
            await asyncio.to_thread(quietly, provider.close_session, launch.session_id)
            raise BrowserFailure(f"could not start the browser ({name}): "
                                 f"{str(exc).splitlines()[0][:300]}", "unavailable") from exc
        guard = guard_for(settings, self.kernel.config)
        session = PageSession(context, browser, provider, launch, guard, settings)
        await session.start()
        log.info("browser: opened a %s browser for session %s", name, key)
        return session

    def close_session(self, key: str, timeout: float = 15.0) -> None:
        session = self._sessions.pop(key, None)
        if session is None or self._loop is None:
            return
        try:
            self.run(session.close(), timeout)
        except Exception as exc:
            log.warning("browser: closing the session of %s failed: %s", key, exc)

    def close_all(self, **_: Any) -> None:
        """``on_shutdown``: every session, then Playwright and the loop thread."""
        for key in list(self._sessions):
            self.close_session(key)
        loop, self._loop = self._loop, None
        if loop is None:
            return
        if self._reaper is not None:
            loop.call_soon_threadsafe(self._reaper.cancel)
            self._reaper = None
        if self._playwright is not None:
            stop: Callable[[], Awaitable[None]] = self._playwright.stop
            self._playwright = None
            try:
                asyncio.run_coroutine_threadsafe(stop(), loop).result(15)
            except Exception as exc:
                log.debug("browser: stopping Playwright: %s", exc)
        loop.call_soon_threadsafe(loop.stop)
        if self._thread is not None:
            self._thread.join(5)
        if not loop.is_running():
            loop.close()

    def end_session(self, session_id: str = "", **_: Any) -> None:
        """``on_session_finalize``: the session's browser closes with it."""
        if session_id:
            self.close_session(session_id)

    def open_sessions(self) -> list[str]:
        return [key for key, s in self._sessions.items() if not s.closed]


def as_launch(answer: Any) -> BrowserLaunch:
    """A provider's ``create_session`` answer as a :class:`BrowserLaunch` (a provider written
    for the original answers a dict: ``cdp_url``, ``bb_session_id`` or ``session_name``)."""
    if isinstance(answer, BrowserLaunch):
        return answer
    if isinstance(answer, dict) and (answer.get("cdp_url") or answer.get("executable")):
        session = (answer.get("session_id") or answer.get("bb_session_id")
                   or answer.get("session_name") or "")
        return BrowserLaunch(cdp_url=str(answer.get("cdp_url") or ""),
                             headers=dict(answer.get("headers") or {}),
                             executable=str(answer.get("executable") or ""),
                             args=tuple(answer.get("args") or ()), session_id=str(session))
    raise BrowserFailure("the browser provider's create_session() returned "
                         f"{type(answer).__name__}, not a BrowserLaunch or a dict with "
                         "'cdp_url'; a bug of the provider plugin", "malformed")


def quietly(close: Callable[[str], Any], session_id: str) -> None:
    try:
        close(session_id)
    except Exception as exc:
        log.debug("browser: closing provider session %s: %s", session_id, exc)

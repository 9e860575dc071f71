"""Builtin plugin: the browser toolset (``browser_navigate``, ``browser_snapshot``,
``browser_click``, ``browser_type``, ``browser_press``, ``browser_scroll``, ``browser_back``,
``browser_get_images``, ``browser_console``, ``browser_vision``).

A real Chromium driven through Playwright for Python (the ``browser`` extra), one per agent
session, opened on first use by a provider of the ``browser`` slot: ``local`` (the system
Chromium), ``cdp`` (a DevTools endpoint: ``browser.cdp_url`` / ``BROWSER_CDP_URL``) or a
cloud provider plugin (``browser.cloud_provider``). Every request passes the web SSRF policy
(:mod:`.guard`); results are page content, marked untrusted as ``web:<host>``. The browser
closes with the agent session and at shutdown. Nothing here imports Playwright until a tool
runs (:mod:`.runtime`). docs/browser.md.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from hermes_agent import hookimpl

if TYPE_CHECKING:
    from hermes_agent import Kernel, PluginContext

TOOLS = ("browser_navigate", "browser_snapshot", "browser_click", "browser_type",
         "browser_press", "browser_scroll", "browser_back", "browser_get_images",
         "browser_console", "browser_vision")
#: the tools that only read the current page: they go on in a tainted turn
READING = ("browser_snapshot", "browser_get_images", "browser_vision")
EMOJI = {"browser_navigate": "🌐", "browser_snapshot": "📸", "browser_click": "👆",
         "browser_type": "⌨️", "browser_press": "⌨️", "browser_scroll": "📜",
         "browser_back": "◀️", "browser_get_images": "🖼️", "browser_console": "🖥️",
         "browser_vision": "👁️"}


class Browser:
    """The plugin's state, built on the first browser call (start-up imports neither
    Playwright nor the tools' modules)."""

    def __init__(self, kernel: "Kernel"):
        self.kernel = kernel
        self._tools: Any = None

    def tools(self) -> Any:
        if self._tools is None:
            from .runtime import BrowserRuntime
            from .tools import BrowserTools

            runtime = BrowserRuntime(self.kernel, lambda settings: select(self.kernel, settings))
            self._tools = BrowserTools(self.kernel, runtime)
        return self._tools

    def handler(self, name: str) -> Any:
        method = name.removeprefix("browser_")

        def handle(args: dict[str, Any], ctx: Any) -> str:
            return str(getattr(self.tools(), method)(args, ctx))

        handle.__name__ = handle.__qualname__ = name
        return handle

    def source(self, args: dict[str, Any], ctx: Any) -> str:
        """``web:<host>`` of the page a call read (asked after the call ran)."""
        if self._tools is not None:
            return str(self._tools.source(args, ctx))
        from urllib.parse import urlsplit

        return f"web:{urlsplit(str(args.get('url') or '')).hostname or '?'}"

    def end_session(self, **payload: Any) -> None:
        if self._tools is not None:
            self._tools.runtime.end_session(**payload)

    def close_all(self, **payload: Any) -> None:
        if self._tools is not None:
            self._tools.runtime.close_all(**payload)


def register(ctx: "PluginContext") -> None:
    from hermes_agent.api import parallel_safe, with_context
    from hermes_agent.api.tools import untrusted_output

    from .providers import LocalChromium, RemoteCDP
    from .schema import SCHEMAS
    from .settings import load_settings

    kernel = ctx.kernel

    def section() -> dict[str, Any]:
        return load_settings(kernel).model_dump()

    ctx.register_browser_provider(LocalChromium(section))
    ctx.register_browser_provider(RemoteCDP(section, kernel.env))
    browser = Browser(kernel)
    for name in TOOLS:
        handler = untrusted_output(browser.source)(with_context(browser.handler(name)))
        if name in READING:
            handler = parallel_safe(handler)
        schema = SCHEMAS[name]
        ctx.register_tool(name=name, toolset="browser", schema=schema, handler=handler,
                          check_fn=lambda: available(kernel), description=schema["description"],
                          emoji=EMOJI[name])
    ctx.register_hook("on_session_finalize", browser.end_session,
                      description="close the session's browser")
    ctx.register_hook("on_shutdown", browser.close_all, description="close every browser")


def select(kernel: "Kernel", settings: Any) -> tuple[str, Any]:
    """The provider ``browser.cloud_provider`` names; unset: ``cdp`` when a CDP endpoint is
    configured, else ``local``."""
    from hermes_agent import HermesError

    from .runtime import BrowserFailure

    name = settings.cloud_provider.strip()
    if not name:
        cdp = settings.cdp_url or kernel.env.get("BROWSER_CDP_URL") or os.environ.get(
            "BROWSER_CDP_URL")
        name = "cdp" if cdp else "local"
    try:
        return name, kernel.slots.get("browser", name)
    except HermesError as exc:
        raise BrowserFailure(str(exc), "unavailable") from exc


def available(kernel: "Kernel") -> bool:
    """Whether the tools can work here: Playwright importable and the selected provider able
    to open a browser. Imports nothing."""
    from .settings import load_settings

    if playwright_missing():
        return False
    try:
        return bool(select(kernel, load_settings(kernel))[1].is_available())
    except Exception:
        return False


def playwright_missing() -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec("playwright") is None
    except (ImportError, ValueError):  # a broken install, or an import hook that hides it
        return True


@hookimpl
def register_toolsets(register: Any) -> None:
    register("browser", tools=TOOLS, kind="leaf",
             description="A real web browser (Chromium): open pages, read them as an "
             "accessibility tree, click, type, screenshots")

"""The two providers the plugin brings to the ``browser`` slot: ``local`` (the system
Chromium, started headless with a fresh profile for each agent session) and ``cdp`` (an
already running Chrome reached over the DevTools protocol: ``browser.cdp_url`` or
``BROWSER_CDP_URL``). Cloud services are provider plugins of the same slot."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Mapping
from typing import Any

from hermes_agent.api.browser import BrowserLaunch, BrowserProvider

#: where Debian's ``chromium`` package puts it; then these names on PATH
DEFAULT_EXECUTABLE = "/usr/bin/chromium"
NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
#: the flags of every local launch (Playwright adds its own automation flags)
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync")
INSTALL_HINT = ("install Chromium (Debian/Ubuntu: apt-get install chromium) or set "
                "browser.executable in config.yaml to a Chromium or Chrome binary")

Settings = Callable[[], Mapping[str, Any]]  # the browser section of config.yaml, read per call


def find_chromium(configured: str = "") -> str:
    """The Chromium binary to start ("" when there is none)."""
    if configured:
        found = shutil.which(os.path.expanduser(configured))
        return found or ""
    if os.access(DEFAULT_EXECUTABLE, os.X_OK):
        return DEFAULT_EXECUTABLE
    for name in NAMES:
        found = shutil.which(name)
        if found:
            return found
    return ""


class LocalChromium(BrowserProvider):
    """The system Chromium, one headless process per agent session."""

    def __init__(self, settings: Settings):
        self.settings = settings

    @property
    def name(self) -> str:
        return "local"

    def executable(self) -> str:
        return find_chromium(str(self.settings().get("executable") or ""))

    def is_available(self) -> bool:
        return bool(self.executable())

    def unavailable_reason(self) -> str:
        configured = str(self.settings().get("executable") or "")
        if configured and not self.executable():
            return (f"browser.executable is {configured!r}, which is not an executable file; "
                    f"fix it, or {INSTALL_HINT}")
        return "" if self.executable() else f"no Chromium found: {INSTALL_HINT}"

    def create_session(self, task_id: str) -> BrowserLaunch:
        binary = self.executable()
        if not binary:
            raise RuntimeError(self.unavailable_reason())
        profile = tempfile.mkdtemp(prefix="hermes-browser-")
        extra = tuple(str(a) for a in self.settings().get("extra_args") or ())
        return BrowserLaunch(executable=binary, args=FLAGS + extra, user_data_dir=profile,
                             session_id=profile)

    def close_session(self, session_id: str) -> bool:
        if session_id and os.path.basename(session_id).startswith("hermes-browser-"):
            shutil.rmtree(session_id, ignore_errors=True)
        return True


class RemoteCDP(BrowserProvider):
    """A Chrome that already runs, reached over the DevTools protocol."""

    def __init__(self, settings: Settings, env: Mapping[str, str]):
        self.settings = settings
        self.env = env

    @property
    def name(self) -> str:
        return "cdp"

    def url(self) -> str:
        return str(self.settings().get("cdp_url") or self.env.get("BROWSER_CDP_URL") or "")

    def is_available(self) -> bool:
        return bool(self.url())

    def unavailable_reason(self) -> str:
        return "" if self.url() else ("no CDP endpoint: set browser.cdp_url in config.yaml "
                                      "(or BROWSER_CDP_URL), e.g. ws://127.0.0.1:9222")

    def create_session(self, task_id: str) -> BrowserLaunch:
        if not self.url():
            raise RuntimeError(self.unavailable_reason())
        return BrowserLaunch(cdp_url=self.url(), session_id=task_id)

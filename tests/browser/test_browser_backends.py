"""The providers behind the ``browser`` slot: a Chromium that already runs, reached over the
DevTools protocol (``browser.cdp_url``), and the local one, whose process and fresh profile
are gone after shutdown."""

from __future__ import annotations

import json
import os
import re
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_agent.testing import make_kernel

from .site import Site, needs_browser, serve

pytestmark = needs_browser()


@pytest.fixture
def site() -> Iterator[Site]:
    with serve() as served:
        yield served


@pytest.fixture
def devtools() -> Iterator[str]:
    """A headless Chromium started by the test with a DevTools port: its ws:// URL."""
    profile = tempfile.mkdtemp(prefix="cdp-test-")
    process = subprocess.Popen(
        ["/usr/bin/chromium", "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0",
         f"--user-data-dir={profile}", "about:blank"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stderr is not None
        deadline = time.monotonic() + 60
        url = ""
        while not url and time.monotonic() < deadline:
            line = process.stderr.readline()
            if not line and process.poll() is not None:
                break
            found = re.search(r"DevTools listening on (ws://\S+)", line)
            url = found.group(1) if found else ""
        assert url, "Chromium did not print its DevTools URL"
        yield url
    finally:
        process.kill()
        process.wait(10)


def call(kernel: Any, name: str, **args: Any) -> dict[str, Any]:
    return json.loads(kernel.tools.dispatch(name, args, session_id="backend"))


def test_a_cdp_endpoint_is_driven_instead_of_a_local_chromium(
        tmp_path: Path, site: Site, devtools: str) -> None:
    before = _profiles_now()
    kernel = make_kernel(tmp_path, config={"browser": {"cdp_url": devtools,
                                                       "allowed_hosts": ["127.0.0.1"]}},
                         env={"HERMES_HOME": str(tmp_path)}, builtins=True)
    try:
        opened = call(kernel, "browser_navigate", url=site.url + "/js")
        assert opened["success"] and "High tide at 14:32" in opened["snapshot"]
        # the guard works over CDP too
        refused = call(kernel, "browser_navigate", url=f"http://localhost:{site.port}/form")
        assert refused["kind"] == "refused"
        assert _profiles_now() == before  # no local Chromium was started
    finally:
        kernel.close()


def _profiles_now() -> set[str]:
    return {p for p in os.listdir(tempfile.gettempdir()) if p.startswith("hermes-browser-")}


def chromium_with(profile: str) -> list[int]:
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                line = Path(f"/proc/{entry}/cmdline").read_bytes()
            except OSError:
                continue
            if profile.encode() in line:
                pids.append(int(entry))
    return pids


def test_shutdown_ends_the_local_chromium_and_deletes_its_profile(tmp_path: Path,
                                                                  site: Site) -> None:
    before = _profiles_now()
    kernel = make_kernel(tmp_path, config={"browser": {"allowed_hosts": ["127.0.0.1"]}},
                         env={"HERMES_HOME": str(tmp_path)}, builtins=True)
    assert call(kernel, "browser_navigate", url=site.url + "/form")["success"]
    (profile,) = _profiles_now() - before
    assert chromium_with(profile)  # the session's Chromium runs with its fresh profile
    kernel.close()  # on_shutdown
    deadline = time.monotonic() + 20
    while chromium_with(profile) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert chromium_with(profile) == []
    assert not (Path(tempfile.gettempdir()) / profile).exists()


CLOUD_PLUGIN = '''
import json
from pathlib import Path
from agent.browser_provider import BrowserProvider   # the original's module path


class Cloud(BrowserProvider):
    """A cloud browser service as the original's providers are written: a dict answer."""

    def __init__(self, config):
        self.config = config

    @property
    def name(self):
        return "legacy-cloud"

    def is_available(self):
        return bool(self.config.get("cdp_url"))

    def create_session(self, task_id):
        return {"session_name": task_id, "bb_session_id": "bb-" + task_id,
                "cdp_url": self.config["cdp_url"], "features": {}}

    def close_session(self, session_id):
        log = Path(self.config["log"])
        log.write_text(log.read_text() + session_id + "\\n" if log.exists() else session_id + "\\n")
        return True

    def emergency_cleanup(self, session_id):
        self.close_session(session_id)


def register(ctx):
    ctx.register_browser_provider(Cloud(ctx.config))
'''


def test_a_cloud_provider_plugin_written_for_the_original_opens_the_browser(
        home: Path, site: Site, devtools: str) -> None:
    from hermes_agent.testing import write_plugin

    write_plugin(home / "plugins", "legacy-cloud", CLOUD_PLUGIN)
    log = home / "closed.log"
    kernel = make_kernel(home, config={
        "plugins": {"enabled": ["legacy-cloud"],
                    "entries": {"legacy-cloud": {"cdp_url": devtools, "log": str(log)}}},
        "browser": {"cloud_provider": "legacy-cloud", "allowed_hosts": ["127.0.0.1"]}},
        env={"HERMES_HOME": str(home)}, builtins=True)
    try:
        assert kernel.plugins["legacy-cloud"].state == "loaded", kernel.plugins["legacy-cloud"]
        opened = call(kernel, "browser_navigate", url=site.url + "/form")
        assert opened["success"] and opened["title"] == "Book a boat"
        kernel.hooks.fire("on_session_finalize", session_id="backend", platform="cli",
                          reason="session_boundary", old_session_id=None, new_session_id=None)
        assert log.read_text() == "bb-backend\n"  # closed with the agent session, by its id
    finally:
        kernel.close()


def test_a_provider_name_that_is_not_installed_is_named(tmp_path: Path) -> None:
    kernel = make_kernel(tmp_path, config={"browser": {"cloud_provider": "browserbase"}},
                         env={"HERMES_HOME": str(tmp_path)}, builtins=True)
    try:
        error = call(kernel, "browser_navigate", url="http://93.184.216.34/")
        assert error["kind"] == "unavailable"
        assert "'browserbase'" in error["error"] and "local" in error["error"]
        assert "browser.cloud_provider" in error["error"]
    finally:
        kernel.close()


def test_an_idle_browser_is_closed_and_the_next_call_opens_a_new_one(tmp_path: Path,
                                                                     site: Site) -> None:
    before = _profiles_now()
    kernel = make_kernel(tmp_path, config={"browser": {"allowed_hosts": ["127.0.0.1"],
                                                       "idle_timeout": 0.5}},
                         env={"HERMES_HOME": str(tmp_path)}, builtins=True)
    try:
        assert call(kernel, "browser_navigate", url=site.url + "/form")["success"]
        (profile,) = _profiles_now() - before
        deadline = time.monotonic() + 30
        while (Path(tempfile.gettempdir()) / profile).exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not (Path(tempfile.gettempdir()) / profile).exists()  # closed while unused
        assert chromium_with(profile) == []
        again = call(kernel, "browser_navigate", url=site.url + "/js")
        assert again["success"] and again["title"] == "Tide tables"
    finally:
        kernel.close()

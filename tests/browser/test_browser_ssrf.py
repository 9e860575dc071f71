"""Every navigation, redirect and subresource request of the browser obeys the web SSRF
policy: private and loopback addresses are refused unless config.yaml allows them
(``browser.allow_private_networks``, ``web.allow_private_networks`` or the host in
``browser.allowed_hosts``). The site runs on 127.0.0.1 and is also reached as ``localhost``,
a name the policy does not allow."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from hermes_agent.testing import make_kernel

from .site import Site, needs_browser, serve

pytestmark = needs_browser()


@pytest.fixture(scope="module")
def site() -> Iterator[Site]:
    with serve() as served:
        yield served


def kernel_with(home: Any, **config: Any) -> Any:
    return make_kernel(home, config=config, env={"HERMES_HOME": str(home)}, builtins=True)


def call(kernel: Any, name: str, **args: Any) -> dict[str, Any]:
    return json.loads(kernel.tools.dispatch(name, args, session_id="ssrf"))


@pytest.mark.parametrize("url", ["http://127.0.0.1:{port}/form", "http://localhost:{port}/form",
                                 "http://10.1.2.3/admin", "http://192.168.0.1/",
                                 "http://[::1]:{port}/form", "http://169.254.169.254/latest"])
def test_private_addresses_are_refused_by_default(tmp_path: Any, site: Site, url: str) -> None:
    kernel = kernel_with(tmp_path)
    try:
        before = len(site.requests)
        refused = call(kernel, "browser_navigate", url=url.format(port=site.port))
        assert refused["kind"] == "refused" and "private or local address" in refused["error"]
        assert "browser.allow_private_networks: true" in refused["error"]  # the fix
        assert len(site.requests) == before  # nothing reached the server
    finally:
        kernel.close()


def test_other_schemes_are_refused(tmp_path: Any) -> None:
    kernel = kernel_with(tmp_path, browser={"allow_private_networks": True})
    try:
        for url in ("file:///etc/passwd", "chrome://settings", "javascript:alert(1)"):
            assert call(kernel, "browser_navigate", url=url)["kind"] == "refused", url
    finally:
        kernel.close()


@pytest.fixture(scope="module")
def only_127(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """The policy allows 127.0.0.1 by name, not localhost: one browser for these tests."""
    kernel = kernel_with(tmp_path_factory.mktemp("ssrf-home"),
                         browser={"allowed_hosts": ["127.0.0.1"]})
    yield kernel
    kernel.close()


def test_a_redirect_to_a_private_address_is_refused(only_127: Any, site: Site) -> None:
    refused = call(only_127, "browser_navigate", url=site.url + "/away")
    assert refused["kind"] == "refused"
    assert f"localhost:{site.port}/secret" in refused["error"]
    assert "/secret" not in site.paths()


def test_subresources_and_scripts_cannot_reach_a_private_address(only_127: Any,
                                                                  site: Site) -> None:
    opened = call(only_127, "browser_navigate", url=site.url + "/mixed")
    assert opened.get("success") and opened["title"] == "Mixed", opened
    console = call(only_127, "browser_console")
    assert any(m["text"] == "fetch blocked" for m in console["messages"])
    assert "/secret.png" not in site.paths() and "/secret-fetch" not in site.paths()
    assert "/mixed" in site.paths()


def test_the_web_switch_allows_private_addresses_too(tmp_path: Any, site: Site) -> None:
    kernel = kernel_with(tmp_path, web={"allow_private_networks": True})
    try:
        opened = call(kernel, "browser_navigate", url=f"http://localhost:{site.port}/form")
        assert opened["success"] and opened["title"] == "Book a boat"
    finally:
        kernel.close()

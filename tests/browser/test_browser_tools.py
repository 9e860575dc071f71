"""The browser tools drive the real Chromium against a site on 127.0.0.1: a page rendered by
JavaScript is read, a form is filled and submitted, refs, keys, scrolling, history, images
and the console work, and the browser closes with the agent session. One browser (one agent
session) serves the whole module."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_agent.testing import make_kernel

from .site import Site, needs_browser, serve

pytestmark = needs_browser()
SESSION = "browser-tools"


@pytest.fixture(scope="module")
def site() -> Iterator[Site]:
    with serve() as served:
        yield served


@pytest.fixture(scope="module")
def kernel(tmp_path_factory: pytest.TempPathFactory, site: Site) -> Iterator[Any]:
    home = tmp_path_factory.mktemp("browser-home")
    booted = make_kernel(home, config={"browser": {"allowed_hosts": ["127.0.0.1"]}},
                         env={"HERMES_HOME": str(home)}, builtins=True)
    yield booted
    booted.close()


def call(kernel: Any, name: str, session: str = SESSION, **args: Any) -> dict[str, Any]:
    return json.loads(kernel.tools.dispatch(name, args, session_id=session))


def test_a_page_rendered_by_javascript_is_read(kernel: Any, site: Site) -> None:
    opened = call(kernel, "browser_navigate", url=site.url + "/js")
    assert opened["success"] and opened["title"] == "Tide tables"
    # the text came from a fetch() after a timer: only a browser that runs scripts shows it
    assert 'heading "Saint-Malo" [level=1]' in opened["snapshot"]
    assert "High tide at 14:32" in opened["snapshot"]
    assert "Loading" not in opened["snapshot"]
    assert ("GET", "/api/tides", "") in site.requests
    full = call(kernel, "browser_snapshot", full=True)
    assert f'link "Book a boat" [ref=@e1] [url={site.url}/form]' in full["snapshot"]
    console = call(kernel, "browser_console", clear=True, expression="document.title.length")
    texts = [(m["type"], m["text"]) for m in console["messages"]]
    assert ("log", "rendered Saint-Malo") in texts
    assert ("error", "a page error for the console") in texts
    assert console["result"] == len("Tide tables")
    assert call(kernel, "browser_console")["messages"] == []  # cleared


def test_a_form_is_filled_and_submitted(kernel: Any, site: Site) -> None:
    call(kernel, "browser_navigate", url=site.url + "/js")
    clicked = call(kernel, "browser_click", ref="@e1")  # the link the script rendered
    assert clicked["navigated"] and clicked["url"] == site.url + "/form"
    shot = call(kernel, "browser_snapshot")["snapshot"]
    assert 'textbox "Your name" [ref=@e1]' in shot and 'spinbutton "Seats" [ref=@e2]' in shot
    assert 'button "Book" [ref=@e3]' in shot
    assert call(kernel, "browser_type", ref="@e1", text="Ada Lovelace")["success"]
    assert call(kernel, "browser_type", ref="e2", text="3")["success"]  # "@" may be left out
    assert '[value="Ada Lovelace"]' in call(kernel, "browser_snapshot")["snapshot"]
    booked = call(kernel, "browser_click", ref="@e3")
    assert booked["title"] == "Booked" and booked["url"] == site.url + "/book"
    assert "Thank you, Ada Lovelace: 3 seats." in call(kernel, "browser_snapshot")["snapshot"]
    assert ("POST", "/book", "who=Ada+Lovelace&seats=3") in site.requests


def test_enter_submits_and_back_returns(kernel: Any, site: Site) -> None:
    call(kernel, "browser_navigate", url=site.url + "/form")
    call(kernel, "browser_type", ref="@e1", text="Grace")
    pressed = call(kernel, "browser_press", key="Enter")
    assert pressed["navigated"] and pressed["title"] == "Booked"
    back = call(kernel, "browser_back")
    assert back["url"] == site.url + "/form" and back["title"] == "Book a boat"
    images = call(kernel, "browser_get_images")
    assert images["images"] == [{"src": site.url + "/boat.png", "alt": "a red boat",
                                 "width": 1, "height": 1}]
    assert call(kernel, "browser_scroll", direction="down")["success"]
    assert call(kernel, "browser_scroll", direction="sideways")["kind"] == "invalid"


def test_refs_that_are_wrong_or_stale_say_what_to_do(kernel: Any, site: Site) -> None:
    call(kernel, "browser_navigate", url=site.url + "/form")
    wrong = call(kernel, "browser_click", ref="submit")
    assert wrong["kind"] == "invalid" and "@e5" in wrong["error"]
    stale = call(kernel, "browser_click", ref="@e99")
    assert stale["kind"] == "stale_ref" and "browser_snapshot" in stale["error"]
    bad_key = call(kernel, "browser_press", key="NoSuchKey")
    assert bad_key["kind"] == "invalid" and "Enter" in bad_key["error"]
    assert call(kernel, "browser_navigate")["kind"] == "invalid"


def test_a_redirect_is_followed_and_the_address_is_the_target(kernel: Any, site: Site) -> None:
    opened = call(kernel, "browser_navigate", url=site.url + "/hop")
    assert opened["url"] == site.url + "/form" and opened["title"] == "Book a boat"
    assert opened["status"] == 200


def test_vision_without_a_vision_model_returns_the_screenshot(kernel: Any, site: Site) -> None:
    call(kernel, "browser_navigate", url=site.url + "/form")
    seen = call(kernel, "browser_vision", question="What colour is the boat?")
    assert seen["analysis"] is None and "auxiliary.vision" in seen["note"]
    assert Path(seen["screenshot_path"]).read_bytes().startswith(b"\x89PNG")


def test_the_browser_closes_with_the_agent_session(kernel: Any, site: Site) -> None:
    call(kernel, "browser_navigate", session="short-lived", url=site.url + "/form")
    profiles = {p for p in os.listdir("/tmp") if p.startswith("hermes-browser-")}
    kernel.hooks.fire("on_session_finalize", session_id="short-lived", platform="cli",
                      reason="session_boundary", old_session_id=None, new_session_id=None)
    after = {p for p in os.listdir("/tmp") if p.startswith("hermes-browser-")}
    assert len(profiles - after) == 1  # that session's fresh profile is gone with its browser
    # the module's own session still works
    assert call(kernel, "browser_snapshot")["success"]

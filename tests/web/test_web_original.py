"""A web provider written for Hermes Agent 0.19, unmodified (it imports the original's module
paths, which the compat plugin serves), selected with web.backend and used by web_search and
web_extract; without its key the tool names the key from the provider's setup schema."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from hermes_agent.builtin_plugins.compat import modules
from hermes_agent.testing import make_kernel, write_plugin

from .conftest import call

LEGACY = '''
import json
import urllib.parse
import urllib.request

from agent.web_search_provider import WebSearchProvider, get_provider_env


class LegacySearch(WebSearchProvider):
    @property
    def name(self):
        return "legacy"

    def is_available(self):
        return bool(get_provider_env("LEGACY_SEARCH_KEY"))

    def supports_extract(self):
        return True

    def get_setup_schema(self):
        return {"name": "Legacy", "env_vars": [{"key": "LEGACY_SEARCH_KEY", "prompt": "key"}]}

    def search(self, query, limit=5):
        url = BASE + "/search?" + urllib.parse.urlencode({"backend": "legacy", "q": query,
                                                           "limit": limit})
        try:
            with urllib.request.urlopen(url, timeout=10) as reply:
                rows = json.loads(reply.read())["results"]
        except Exception as exc:
            return {"success": False, "error": str(exc)}
        return {"success": True, "data": {"web": [
            {"title": r["title"], "url": r["url"], "description": r["snippet"], "position": i}
            for i, r in enumerate(rows, 1)]}}

    async def extract(self, urls, **kwargs):
        pages = []
        for url in urls:
            with urllib.request.urlopen(url, timeout=10) as reply:
                text = reply.read().decode()
            pages.append({"url": url, "title": text.splitlines()[0], "content": text,
                          "raw_content": text})
        return pages


def register(ctx):
    ctx.register_web_search_provider(LegacySearch())
'''


@pytest.fixture(autouse=True)
def compat_paths() -> Iterator[None]:
    modules.uninstall()
    yield
    modules.uninstall()


def legacy_kernel(home, web, monkeypatch, key: str | None):  # type: ignore[no-untyped-def]
    write_plugin(home / "plugins", "legacy", f"BASE = {web.url!r}\n" + LEGACY,
                 manifest="name: legacy\n")
    if key is None:
        monkeypatch.delenv("LEGACY_SEARCH_KEY", raising=False)
    else:
        monkeypatch.setenv("LEGACY_SEARCH_KEY", key)  # the original reads os.environ
    return make_kernel(home, builtins=True, config={
        "plugins": {"enabled": ["legacy"]},
        "web": {"backend": "legacy", "allow_private_networks": True}})


def test_an_unmodified_original_provider_searches_and_extracts(home, web, monkeypatch) -> None:
    kernel = legacy_kernel(home, web, monkeypatch, "k")
    assert kernel.plugins["legacy"].state == "loaded", kernel.plugins["legacy"].reason
    result = call(kernel, "web_search", query="tea", limit=2)
    assert result["backend"] == "legacy"
    assert [r["url"] for r in result["data"]["web"]] == [f"{web.url}/page/1", f"{web.url}/page/2"]
    page = web.page("1", "Tea\nGreen tea is a tea.")
    row = call(kernel, "web_extract", urls=[page])["results"][0]
    assert row["title"] == "Tea" and "Green tea is a tea." in row["content"]


def test_without_its_key_the_tool_names_the_key_from_the_setup_schema(home, web,
                                                                      monkeypatch) -> None:
    kernel = legacy_kernel(home, web, monkeypatch, None)
    result = call(kernel, "web_search", query="tea")
    assert result["kind"] == "missing_key" and "LEGACY_SEARCH_KEY is not set" in result["error"]
    assert web.requests == []

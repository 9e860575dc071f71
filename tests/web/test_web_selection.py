"""Which backend answers: the selected one or a clear error; another one only when the user
listed it in web.fallback."""

from __future__ import annotations

from .conftest import call


def test_no_backend_selected_says_how_to_choose_one(kernel_with, web) -> None:
    result = call(kernel_with(), "web_search", query="hermes")
    assert result["kind"] == "not_configured"
    assert "hermes config set web.backend" in result["error"]
    assert "fakesearch" in result["error"] and "paid" in result["error"]  # what is installed
    assert web.requests == []


def test_the_selected_backend_answers(kernel_with, web) -> None:
    result = call(kernel_with({"backend": "fakesearch"}), "web_search", query="tea", limit=2)
    assert result["success"] is True and result["backend"] == "fakesearch"
    assert [r["title"] for r in result["data"]["web"]] == ["tea result 1", "tea result 2"]
    assert result["data"]["web"][0] == {
        "title": "tea result 1", "url": f"{web.url}/page/1", "description": "about tea (1)",
        "position": 1, "published": None, "source": "fakesearch"}
    assert "never as instructions" in result["notice"]
    assert web.count("/search?backend=fakesearch") == 1 and web.count("/search?backend=paid") == 0


def test_an_unknown_backend_lists_the_installed_ones_and_nothing_else_runs(kernel_with, web) -> None:
    result = call(kernel_with({"backend": "bravo"}), "web_search", query="x")
    assert result["kind"] == "unknown_backend" and result["backend"] == "bravo"
    assert "'bravo' (web.backend) is not installed" in result["error"]
    assert "fakesearch" in result["error"] and "hermes config set web.backend" in result["error"]
    assert web.requests == []


def test_a_backend_without_its_key_names_the_key_and_never_falls_back(kernel_with, web) -> None:
    kernel = kernel_with({"backend": "locked"})
    result = call(kernel, "web_search", query="x")
    assert result["kind"] == "missing_key" and "FAKE_KEY is not set" in result["error"]
    assert "hermes web search test --backend locked" in result["error"]
    assert web.requests == []  # fakesearch and paid are available, yet nobody was asked
    kernel = kernel_with({"backend": "locked"}, env={"FAKE_KEY": "k"})
    assert call(kernel, "web_search", query="x")["backend"] == "locked"


def test_a_plugin_not_loaded_for_a_missing_key_names_the_key(kernel_with, web) -> None:
    kernel = kernel_with({"backend": "keyed"})
    assert kernel.plugins["keyed"].state == "missing env"
    result = call(kernel, "web_search", query="x")
    assert result["kind"] == "missing_key" and "KEYED_API_KEY is not set" in result["error"]
    kernel = kernel_with({"backend": "keyed"}, env={"KEYED_API_KEY": "k"})
    assert call(kernel, "web_search", query="x")["data"]["web"][0]["title"] == "keyed"


def test_a_plugin_not_enabled_says_why(kernel_with, web) -> None:
    kernel = kernel_with({"backend": "keyed"}, plugins={"enabled": ["fakeweb"]},
                         env={"KEYED_API_KEY": "k"})
    result = call(kernel, "web_search", query="x")
    assert result["kind"] == "not_loaded" and "hermes plugins enable keyed" in result["error"]
    result = call(kernel, "web_search", query="x")  # listed among the installed ones
    kernel = kernel_with({"backend": "nope"}, plugins={"enabled": ["fakeweb"]})
    assert "keyed (not enabled)" in call(kernel, "web_search", query="x")["error"]


def test_per_capability_keys_override_web_backend(kernel_with, web) -> None:
    page = web.page("a", "Page A\nbody")
    kernel = kernel_with({"backend": "paid", "search_backend": "fakesearch",
                          "allow_private_networks": True})
    assert call(kernel, "web_search", query="x")["backend"] == "fakesearch"
    assert call(kernel, "web_extract", urls=[page])["backend"] == "paid"
    kernel = kernel_with({"backend": "fakesearch", "extract_backend": "searchonly",
                          "allow_private_networks": True})
    result = call(kernel, "web_extract", urls=[page])
    assert result["kind"] == "unsupported" and "web.extract_backend" in result["error"]


def test_the_fallback_list_is_honoured_in_order_when_written(kernel_with, web) -> None:
    kernel = kernel_with({"backend": "offline", "fallback": ["locked", "paid", "fakesearch"]})
    result = call(kernel, "web_search", query="x")
    assert result["success"] is True and result["backend"] == "paid"
    assert [(t["backend"], t["kind"]) for t in result["fell_back_from"]] == [
        ("offline", "unreachable"), ("locked", "missing_key")]
    assert web.count("/search?backend=fakesearch") == 0
    # without the list the same failure is reported as it is
    result = call(kernel_with({"backend": "offline"}), "web_search", query="x")
    assert result["kind"] == "unreachable" and "cannot reach" in result["error"]


def test_every_fallback_failing_reports_each(kernel_with, web) -> None:
    result = call(kernel_with({"backend": "offline", "fallback": ["broken"]}), "web_search",
                  query="x")
    assert result["kind"] == "unreachable"
    assert [t["backend"] for t in result["tried"]] == ["offline", "broken"]
    assert "broken: web backend 'broken' failed with RuntimeError" in result["error"]


def test_a_provider_written_for_the_original_is_selected_like_any(kernel_with, web) -> None:
    result = call(kernel_with({"backend": "original"}), "web_search", query="tea", limit=1)
    assert result["data"]["web"][0]["title"] == "tea result 1"
    assert web.count("/search?backend=original") == 1


def test_a_backend_unavailable_with_its_key_set_says_to_check_the_value(kernel_with, web) -> None:
    from hermes_agent.api import WebBackend

    class Picky(WebBackend):
        name = "picky"
        env_vars = ("PICKY_URL",)

        def is_available(self) -> bool:
            return False  # e.g. PICKY_URL is not a URL

        def search(self, query, limit=5, **options):
            raise AssertionError("never called")

    kernel = kernel_with({"backend": "picky"}, env={"PICKY_URL": "not a url"})
    kernel.register_plugin(lambda ctx: ctx.register_web_search_provider(Picky()), "picky")
    result = call(kernel, "web_search", query="x")
    assert result["kind"] == "missing_key"
    assert "reports itself unavailable although PICKY_URL is set" in result["error"]


def test_a_generic_backend_that_cannot_extract_gives_way_to_one_that_can(kernel_with, web) -> None:
    """The original's web.backend: searxng (search only) still extracts pages: with the
    available backend that can (here several can; `local` comes first, docs/web.md)."""
    page = web.page("a", "Page A\nbody")
    kernel = kernel_with({"backend": "searchonly", "allow_private_networks": True})
    result = call(kernel, "web_extract", urls=[page])
    assert result["success"] is True and result["backend"] == "local"
    assert "body" in result["results"][0]["content"]
    assert call(kernel, "web_search", query="x")["backend"] == "searchonly"
    assert web.count("/search?backend=searchonly") == 1


def test_a_backend_named_for_the_capability_is_never_replaced(kernel_with, web) -> None:
    page = web.page("a", "Page A\nbody")
    kernel = kernel_with({"backend": "fakesearch", "extract_backend": "searchonly",
                          "allow_private_networks": True})
    result = call(kernel, "web_extract", urls=[page])
    assert result["kind"] == "unsupported" and "(web.extract_backend)" in result["error"]
    # web.backend that can extract but is unavailable is reported, not replaced
    kernel = kernel_with({"backend": "locked", "allow_private_networks": True})
    result = call(kernel, "web_extract", urls=[page])
    assert result["kind"] == "missing_key" and "FAKE_KEY" in result["error"]
    assert web.requests == []


def test_no_available_backend_can_stand_in(kernel_with, web) -> None:
    from hermes_agent.builtin_plugins.web.selection import resolve
    from hermes_agent.builtin_plugins.web.settings import load_settings

    from hermes_agent.api import WebBackend

    class SearchOnly(WebBackend):
        name = "searchonly"

        def is_available(self) -> bool:
            return True

        def search(self, query, limit=5, **options):
            return []

    # the test backends and local (the bundled extractor that needs no key) are off
    kernel = kernel_with({"backend": "searchonly"},
                         plugins={"enabled": [], "disabled": ["web-local"]})
    kernel.register_plugin(lambda ctx: ctx.register_web_search_provider(SearchOnly()), "solo")
    page = web.page("a", "Page A\nbody")
    result = call(kernel, "web_extract", urls=[page])
    assert result["kind"] == "unsupported"
    assert "'searchonly' (web.backend) cannot extract pages, and no other" in result["error"]
    assert "set web.extract_backend" in result["error"]
    assert resolve(kernel, load_settings(kernel), "search").name == "searchonly"


def test_the_stand_in_is_chosen_in_the_documented_order(kernel_with, web) -> None:
    from hermes_agent.api import WebBackend, WebPage
    from hermes_agent.builtin_plugins.web.selection import PREFERENCE

    class Extractor(WebBackend):
        def __init__(self, name: str) -> None:
            self._name = name

        @property
        def name(self) -> str:
            return self._name

        def is_available(self) -> bool:
            return True

        def search(self, query, limit=5, **options):
            raise AssertionError("never called")

        def extract(self, urls, **options):
            return [WebPage(u, self._name, f"read by {self._name}") for u in urls]

    assert PREFERENCE[:2] == ("local", "firecrawl")
    kernel = kernel_with({"backend": "searchonly", "allow_private_networks": True},
                         plugins={"enabled": ["fakeweb", "keyed"], "disabled": ["web-local", "firecrawl", "tavily"]})
    kernel.register_plugin(lambda ctx: [ctx.register_web_search_provider(Extractor(n))
                                        for n in ("tavily", "firecrawl")], "extractors")
    page = web.page("a", "Page A\nbody")
    assert call(kernel, "web_extract", urls=[page])["backend"] == "firecrawl"
    from hermes_agent.builtin_plugins.web.selection import resolve
    from hermes_agent.builtin_plugins.web.settings import load_settings

    note = resolve(kernel, load_settings(kernel), "extract").note
    assert "(firecrawl, tavily, broken, fakesearch, offline, original, paid)" in note

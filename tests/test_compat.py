"""Plugins written for Hermes Agent 0.19 import helper modules by their old paths."""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from hermes_agent.api import ContextEngine, MemoryProvider, tool_result
from hermes_agent import Kernel
from hermes_agent.builtin_plugins.compat import helpers, modules
from hermes_agent.builtin_plugins.compat.web_provider import WebSearchProvider
from hermes_agent.builtin_plugins.agent.memory_slot import active_memory
from hermes_agent.testing import write_plugin

LEGACY_PLUGIN = '''
from agent.memory_provider import MemoryProvider
from agent.web_search_provider import WebSearchProvider, get_provider_env
from tools.registry import tool_error, tool_result
from tools.interrupt import is_interrupted
from tools.website_policy import check_website_access
from hermes_constants import get_hermes_home

class Recall(MemoryProvider):
    @property
    def name(self):
        return "recall"
    def is_available(self):
        return True
    def initialize(self, session_id, **kwargs):
        self.session_id = session_id
    def get_tool_schemas(self):
        return []

class Search(WebSearchProvider):
    @property
    def name(self):
        return "legacy-search"
    def is_available(self):
        return bool(get_provider_env("LEGACY_SEARCH_KEY"))

def lookup(args, **kwargs):
    if not args.get("q"):
        return tool_error("q is required", success=False)
    return tool_result(q=args["q"], interrupted=is_interrupted(),
                       blocked=check_website_access("https://example.com"),
                       home=str(get_hermes_home()))

SCHEMA = {"name": "legacy_lookup", "description": "d",
          "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}

def register(ctx):
    ctx.register_memory_provider(Recall())
    ctx.register_web_search_provider(Search())
    ctx.register_tool(name="legacy_lookup", toolset="legacy", schema=SCHEMA, handler=lookup)
'''


@pytest.fixture
def clean_hook() -> Iterator[None]:
    modules.uninstall()
    yield
    modules.uninstall()


def boot(home: Path, disabled: tuple[str, ...] = ()) -> Kernel:
    (home / "config.yaml").write_text(json.dumps(
        {"plugins": {"enabled": ["legacy"], "disabled": list(disabled)},
         "memory": {"provider": "recall"}}), encoding="utf-8")
    return Kernel(home, env={"HERMES_HOME": str(home), "LEGACY_SEARCH_KEY": "k"},
                  entry_points=False).boot()


def test_plugin_importing_old_module_paths_loads_and_works(home: Path, clean_hook: None,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LEGACY_SEARCH_KEY", "k")
    write_plugin(home / "plugins", "legacy", LEGACY_PLUGIN, manifest="name: legacy\n")
    kernel = boot(home)
    assert kernel.plugins["legacy"].state == "loaded", kernel.plugins["legacy"].reason
    assert kernel.plugins["compat"].state == "loaded"
    memory = active_memory(kernel)
    assert [m.name for m in memory] == ["recall"] and isinstance(memory[0], MemoryProvider)
    search = kernel.slots.get("web_search", "legacy-search")
    assert isinstance(search, WebSearchProvider) and search.is_available()
    assert search.search("x") == {"success": False,
                                  "error": "legacy-search does not support search"}
    result = json.loads(kernel.tools.dispatch("legacy_lookup", {"q": "hi"}))
    assert result == {"q": "hi", "interrupted": False, "blocked": None, "home": str(home)}
    assert json.loads(kernel.tools.dispatch("legacy_lookup", {})) == {
        "error": "q is required", "success": False}


def test_without_the_builtin_the_old_paths_do_not_exist(home: Path, clean_hook: None) -> None:
    write_plugin(home / "plugins", "legacy", LEGACY_PLUGIN, manifest="name: legacy\n")
    kernel = boot(home, disabled=("compat",))
    status = kernel.plugins["legacy"]
    assert status.state == "failed"
    assert "No module named 'agent" in status.reason  # (tests/agent/ may be on sys.path)


def test_a_real_package_of_the_same_name_wins(tmp_path: Path, clean_hook: None,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "hermes_constants.py").write_text("REAL = True\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "hermes_constants", raising=False)
    modules.install()
    import hermes_constants

    assert hermes_constants.REAL is True
    monkeypatch.delitem(sys.modules, "hermes_constants")


def test_interrupt_flag_is_per_thread() -> None:
    seen = {}
    helpers.set_interrupted(threading.get_ident())
    try:
        worker = threading.Thread(target=lambda: seen.setdefault("other", helpers.is_interrupted()))
        worker.start()
        worker.join()
        assert helpers.is_interrupted() is True and seen["other"] is False
    finally:
        helpers.set_interrupted(threading.get_ident(), False)
    assert helpers.is_interrupted() is False


def test_base_classes_defaults() -> None:
    class Engine(ContextEngine):
        name = "tiny"

        def update_from_response(self, usage):
            self.last_prompt_tokens = usage["prompt_tokens"]

        def should_compress(self, prompt_tokens=None):
            return (prompt_tokens or self.last_prompt_tokens) > self.threshold_tokens

        def compress(self, messages, current_tokens=None, focus_topic=None, force=False,
                     memory_context=""):
            return messages[-self.protect_last_n:]

    engine = Engine()
    engine.update_model("m", 1000)
    assert engine.threshold_tokens == 750
    engine.update_from_response({"prompt_tokens": 800})
    assert engine.should_compress() is True
    engine.on_session_reset()
    assert engine.last_prompt_tokens == 0
    assert json.loads(engine.handle_tool_call("x", {}))["error"].startswith("context engine 'tiny'")
    with pytest.raises(TypeError):
        MemoryProvider()  # type: ignore[abstract]
    assert json.loads(tool_result({"a": 1})) == {"a": 1}

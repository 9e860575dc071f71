"""Memory providers in the layouts plugins written for the original use: a folder under
$HERMES_HOME/plugins with no plugin.yaml, a module with no register(), a register() that
registers nothing, a duck-typed class, a provider named differently from its plugin."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from hermes_agent import Kernel, SlotError
from hermes_agent.discovery import discover
from hermes_agent.builtin_plugins.compat import modules
from hermes_agent.builtin_plugins.agent.memory_slot import active_memory

SUBCLASS = '''
from agent.memory_provider import MemoryProvider

class Helper:  # not a provider: defined first, must not be picked
    pass

class FolderMemory(MemoryProvider):
    @property
    def name(self):
        return "folder-mem"
    def is_available(self):
        return True
    def initialize(self, session_id, **kwargs):
        self.home = kwargs["hermes_home"]
    def get_tool_schemas(self):
        return []
    def prefetch(self, query, *, session_id=""):
        return "recalled from a folder: " + query
'''

DUCK = '''
class Duck:  # subclasses nothing
    name = "duck"
    def is_available(self):
        return True
    def initialize(self, session_id, **kwargs):
        pass
    def get_tool_schemas(self):
        return []
'''


@pytest.fixture(autouse=True)
def clean_hook():
    modules.uninstall()
    yield
    modules.uninstall()


def folder(home: Path, name: str, source: str, **files: str) -> Path:
    directory = home / "plugins" / name
    directory.mkdir(parents=True)
    (directory / "__init__.py").write_text(textwrap.dedent(source), encoding="utf-8")
    for rel, text in files.items():
        (directory / rel).write_text(textwrap.dedent(text), encoding="utf-8")
    return directory


def boot(home: Path, provider: str = "") -> Kernel:
    (home / "config.yaml").write_text(json.dumps({"memory": {"provider": provider}}),
                                      encoding="utf-8")
    return Kernel(home, env={"HERMES_HOME": str(home)}, entry_points=False).boot()


def test_a_folder_without_plugin_yaml_is_discovered_as_a_memory_provider(home: Path) -> None:
    folder(home, "folder-mem", SUBCLASS)
    found = discover(home, env={}, entry_points=False)
    record = found.get("folder-mem")
    assert record is not None and record.source == "user"
    assert (record.kind, record.slot) == ("exclusive", "memory")
    assert record.manifest is not None and record.manifest.synthesized
    assert "folder-mem" not in found.problems


def test_it_loads_only_when_memory_provider_names_it(home: Path) -> None:
    folder(home, "folder-mem", SUBCLASS)
    idle = boot(home)
    assert idle.plugins["folder-mem"].state == "not selected"
    assert "hermes config set memory.provider folder-mem" in idle.plugins["folder-mem"].reason

    kernel = boot(home, "folder-mem")
    status = kernel.plugins["folder-mem"]
    assert status.state == "loaded", status.reason
    assert status.providers == ["memory:folder-mem"]
    active = active_memory(kernel)
    assert [p.name for p in active] == ["folder-mem"]
    assert type(active[0]).__name__ == "FolderMemory"  # not the Helper class defined first
    assert active[0].prefetch("tea") == "recalled from a folder: tea"


def test_a_duck_typed_provider_class_is_instantiated(home: Path) -> None:
    folder(home, "duck", DUCK)
    kernel = boot(home, "duck")
    assert kernel.plugins["duck"].state == "loaded", kernel.plugins["duck"].reason
    assert [p.name for p in active_memory(kernel)] == ["duck"]


def test_a_register_that_registers_nothing_falls_back_to_the_class(home: Path) -> None:
    folder(home, "folder-mem", SUBCLASS + "\ncalled = []\ndef register(ctx):\n"
                                          "    called.append(ctx)\n")
    kernel = boot(home, "folder-mem")
    assert kernel.plugins["folder-mem"].state == "loaded", kernel.plugins["folder-mem"].reason
    assert kernel.slots.owner("memory", "folder-mem") == "folder-mem"


def test_a_provider_named_unlike_its_folder_is_selected_by_the_folder_name(home: Path) -> None:
    source = SUBCLASS + "\ndef register(ctx):\n    ctx.register_memory_provider(FolderMemory())\n"
    folder(home, "my-memory", source, **{"helpers.py": "VALUE = 1\n"})
    kernel = boot(home, "my-memory")
    assert kernel.plugins["my-memory"].state == "loaded", kernel.plugins["my-memory"].reason
    assert [p.name for p in active_memory(kernel)] == ["folder-mem"]


def test_a_folder_with_no_provider_fails_with_a_clear_reason(home: Path) -> None:
    folder(home, "notes", "VALUE = 1\n")
    kernel = boot(home, "notes")
    status = kernel.plugins["notes"]
    assert status.state == "failed"
    assert "defines no memory provider class and no register(ctx)" in status.reason
    assert "add a plugin.yaml" in status.reason
    with pytest.raises(SlotError, match="memory provider 'notes'.*is not installed"):
        active_memory(kernel)


def test_the_compat_plugin_finds_the_class_and_without_it_none_is_looked_for(home: Path) -> None:
    """Recognising a provider class is the compat plugin's (its find_slot_provider hook),
    not the kernel's: with compat disabled, a folder defining only a class does not load."""
    folder(home, "duck", DUCK)
    kernel = boot(home, "duck")
    assert [c.plugin for c in kernel.hooks.callbacks("find_slot_provider")] == ["compat"]
    (home / "config.yaml").write_text(json.dumps({"memory": {"provider": "duck"},
                                                  "plugins": {"disabled": ["compat"]}}))
    without = Kernel(home, env={"HERMES_HOME": str(home)}, entry_points=False).boot()
    assert without.plugins["compat"].state == "disabled"
    assert (without.plugins["duck"].state, without.plugins["duck"].code) == ("failed", "no_entry")


def test_folders_under_a_category_and_folders_with_a_manifest_are_unchanged(home: Path) -> None:
    (home / "plugins" / "tools" / "calc").mkdir(parents=True)
    (home / "plugins" / "tools" / "calc" / "plugin.yaml").write_text("name: calc\n")
    (home / "plugins" / "tools" / "calc" / "__init__.py").write_text("def register(ctx): pass\n")
    found = discover(home, env={}, entry_points=False)
    assert found.get("calc") is not None and found.get("calc").slot == ""
    assert found.get("tools") is None  # a category folder (no __init__.py) is not a plugin


def test_a_category_folder_with_an_init_is_still_a_category(home: Path) -> None:
    category = home / "plugins" / "tools"
    (category / "calc").mkdir(parents=True)
    (category / "__init__.py").write_text("")
    (category / "calc" / "plugin.yaml").write_text("name: calc\n")
    (category / "calc" / "__init__.py").write_text("def register(ctx): pass\n")
    found = discover(home, env={}, entry_points=False)
    assert found.get("calc") is not None and found.get("tools") is None

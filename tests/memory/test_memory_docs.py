"""docs/memory.md against the code: the provider interface table names every method of
``MemoryProvider`` (and nothing else), and the command table every `hermes memory` command."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

from hermes_agent.api import MemoryProvider
from hermes_agent.builtin_plugins.memory.cli import memory
from hermes_agent.builtin_plugins.memory.config_schema import MemorySection

DOC = (Path(__file__).resolve().parents[2] / "docs" / "memory.md").read_text(encoding="utf-8")


def section(title: str) -> str:
    start = DOC.index(title)
    end = DOC.find("\n#", start + len(title))
    return DOC[start:end if end != -1 else None]


def test_the_interface_table_matches_the_base_class() -> None:
    rows = [line for line in section("### The interface").splitlines() if line.startswith("| `")]
    documented = {name for row in rows for name in re.findall(r"`([a-z_]+)(?:\(|`)", row.split("|")[1])}
    methods = {n for n, _ in inspect.getmembers(MemoryProvider) if not n.startswith("_")}
    assert documented == methods
    required = {n for n in methods if getattr(getattr(MemoryProvider, n), "__isabstractmethod__", False)
                or (isinstance(inspect.getattr_static(MemoryProvider, n), property))}
    marked = {name for row in rows if row.split("|")[2].strip() == "yes"
              for name in re.findall(r"`([a-z_]+)(?:\(|`)", row.split("|")[1])}
    assert marked == required


def test_every_memory_command_is_documented() -> None:
    table = section("## `hermes memory`")
    for name in memory.commands:
        assert f"`hermes memory {name}" in table, name
    for name in memory.commands["setup"].params:
        if name.opts and name.opts[0].startswith("--"):
            assert name.opts[0] in table


def test_the_config_keys_of_the_memory_section_are_documented() -> None:
    for key in MemorySection.model_fields:
        assert f"{key}:" in DOC or f"memory.{key}" in DOC, key

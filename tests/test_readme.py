"""The top-level README describes what exists: the bundled plugin categories it calls present
hold plugins and those it calls empty hold none, and the quick start is exactly its two commands."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _names(after: str, row: str) -> set[str]:
    match = re.search(re.escape(after) + r"(.*?)(?:\.|\|)", row)
    assert match, f"the README's plugins/<category>/ row no longer says {after!r}"
    return set(re.findall(r"`([\w-]+)`", match.group(1)))


def test_bundled_plugin_categories_match_the_plugins_folder() -> None:
    row = next(line for line in README.splitlines() if line.startswith("| `plugins/<category>/`"))
    present, empty = _names("Bundled now:", row), _names("bundled plugins to come:", row)
    folders = {p for p in (ROOT / "plugins").iterdir() if p.is_dir() and p.name != "__pycache__"}
    with_plugins = {f.name for f in folders if any(f.glob("*/plugin.yaml"))}
    assert present == with_plugins
    assert empty == {f.name for f in folders} - with_plugins


def test_the_quick_start_has_exactly_the_two_commands() -> None:
    section = README.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    commands = [line.strip() for line in section.splitlines() if line.startswith("    ")]
    assert commands == [
        "python3 -m venv .venv && .venv/bin/pip install -q -e . && "
        '.venv/bin/hermes chat -q "Say hello"',
        "python3 -m venv .venv && .venv/bin/pip install -q -e '.[test]' && "
        ".venv/bin/python -m pytest -q -n 3",
    ]

"""Every install hint names this distribution, ``hermes-agent-runtime``: on PyPI,
``hermes-agent`` is the original Hermes Agent, whose wheel replaces the ``hermes`` command.
Scans every *.md, *.py and plugin.yaml of the repository outside tests/ and virtualenvs."""

from __future__ import annotations

import os
import re
from pathlib import Path

ROOT = Path(__file__).parent.parent
SKIP = {"tests", ".venv", "venv", ".git", "build", "dist", "node_modules", "__pycache__"}
# the original with an extra (`hermes-agent[mcp]`), anywhere
EXTRA = re.compile(r"(?<![\w-])hermes-agent\[")
# `pip install ... hermes-agent` (also pipx / uv pip), but not the original pinned on purpose
# (`hermes-agent==0.19.0`: the benchmarks install it in a throwaway virtualenv to compare)
INSTALL = re.compile(r"\bpip\s+install\b[^\n`]*?(?<![\w-])['\"]?hermes-agent(?![\w-]|==)")


def _files() -> list[Path]:
    found = []
    for folder, dirs, names in os.walk(ROOT):
        dirs[:] = [d for d in dirs if d not in SKIP and not d.endswith(".egg-info")]
        found += [Path(folder, n) for n in names
                  if n.endswith((".md", ".py")) or n == "plugin.yaml"]
    return found


def wrong_hints(text: str) -> list[tuple[int, str]]:
    return [(number, line.strip()) for number, line in enumerate(text.splitlines(), 1)
            if EXTRA.search(line) or INSTALL.search(line)]


def test_the_scan_finds_the_original_and_passes_this_distribution() -> None:
    assert wrong_hints("pip install 'hermes-agent[mcp]'")
    assert wrong_hints("run `pip install hermes-agent` first")
    assert wrong_hints("uv pip install -U hermes-agent")
    assert not wrong_hints("pip install 'hermes-agent-runtime[mcp]'")
    assert not wrong_hints("pip install hermes-agent-runtime")
    assert not wrong_hints("pip install hermes-agent==0.19.0  # the original, to compare")


def test_no_install_hint_names_the_original_distribution() -> None:
    files = _files()
    assert len(files) > 100  # the scan sees the repository
    problems = [f"{path.relative_to(ROOT)}:{number}: {line}"
                for path in files
                for number, line in wrong_hints(path.read_text(encoding="utf-8",
                                                               errors="replace"))]
    assert not problems, ("install hints must name hermes-agent-runtime (hermes-agent on PyPI "
                          "is the original, whose wheel replaces our `hermes`):\n"
                          + "\n".join(problems))

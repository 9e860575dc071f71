"""The api's budget, and the kits' ownership: each kit names the plugin that owns it and has
a section in docs/kits.md. What each layer may import, the api's "no I/O" included, is
tests/test_layers.py's."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
API = ROOT / "api"
KITS = ROOT / "kits"


def test_the_api_is_small() -> None:
    import hermes_agent.api as api

    lines = sum(len(p.read_text(encoding="utf-8").splitlines()) for p in API.glob("*.py"))
    assert lines <= 2150  # 2000 until the browser, vision and speech contracts came
    assert len(api.__all__) <= 101


def kit_modules() -> list[Path]:
    return [p for p in sorted(KITS.rglob("*.py")) if p != KITS / "__init__.py"]


def test_every_kit_names_the_plugin_that_owns_it() -> None:
    plugins = {p.parent.name for p in (ROOT / "builtin_plugins").glob("*/plugin.yaml")}
    assert len(kit_modules()) >= 10
    for path in kit_modules():
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
        first = doc.splitlines()[0] if doc else ""
        if first.startswith("Owner: the CLI (`hermes_agent.cli`)"):
            continue  # the helpers of plugins' CLI commands belong to the shell they run in
        owner = first.removeprefix("Owner: the builtin plugin `").partition("`")[0]
        assert first.startswith("Owner: the builtin plugin `") and owner in plugins, path


def test_docs_kits_md_has_a_section_per_kit() -> None:
    text = (ROOT / "docs" / "kits.md").read_text(encoding="utf-8")
    for path in sorted(KITS.iterdir()):
        if path.name.startswith("_") or path.name == "__pycache__":
            continue
        name = path.stem if path.is_file() else path.name
        assert f"`hermes_agent.kits.{name}`" in text, name
    assert "kits.md" in (ROOT / "docs" / "api.md").read_text(encoding="utf-8")

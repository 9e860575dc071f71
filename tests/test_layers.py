"""The layers of the installed package, bottom to top, and what each may import.

hookspecs < kernel < api < kits < plugins < cli: a module imports its own layer or one
below it, never one above. Across a layer line only the kernel's entry points
(``hermes_agent.__all__``, the facade) are reachable: no layer above the kernel imports
one of its modules. Every import counts, also one inside a function or under
``TYPE_CHECKING``. docs/architecture.md carries the import graph this file computes;
``python tests/test_layers.py`` prints it afresh.
"""

from __future__ import annotations

import ast
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
ORDER = ("hookspecs", "kernel", "api", "kits", "plugins", "cli")
# repository folder -> (layer, package it is installed as)
FOLDERS = {"hookspecs": ("hookspecs", "hermes_agent.hookspecs"), "kernel": ("kernel", "hermes_agent"),
           "api": ("api", "hermes_agent.api"), "kits": ("kits", "hermes_agent.kits"),
           "builtin_plugins": ("plugins", "hermes_agent.builtin_plugins"),
           "plugins": ("plugins", "hermes_agent.plugins"), "cli": ("cli", "hermes_agent.cli"),
           "testing": ("testing", "hermes_agent.testing")}
# What each layer may import of ours; "facade" is a name of hermes_agent.__all__.
ALLOWED = {"hookspecs": {"hookspecs"}, "kernel": {"hookspecs", "kernel"},
           "api": {"hookspecs", "facade", "api"}, "kits": {"hookspecs", "facade", "api", "kits"},
           "plugins": {"facade", "api", "kits", "own plugin"},
           "cli": {"facade", "api", "kits", "cli"},
           "testing": {"hookspecs", "kernel", "facade", "api", "kits", "plugins", "own plugin",
                       "testing"}}
# Libraries that do I/O: the contracts import none of them.
IO_LIBRARIES = {"sqlite3", "httpx", "httpx2", "httpcore", "httpcore2", "socket", "ssl", "ctypes",
                "subprocess", "uvicorn", "starlette", "h11", "httptools", "ruamel", "yaml",
                "psycopg", "psycopg_pool", "websockets", "urllib", "urllib3", "requests", "http",
                "shutil", "tempfile"}


@dataclass(frozen=True)
class Module:
    name: str  # as installed: hermes_agent.api.models
    path: Path
    layer: str
    plugin: str  # the plugin folder it belongs to ("" outside plugins)
    is_package: bool


@dataclass(frozen=True)
class Import:
    source: Module
    target: str  # a module of ours, or a library's top-level name
    kind: str  # a layer, "facade", "own plugin", or "library"
    line: int


def modules(root: Path = REPO) -> list[Module]:
    found = []
    for folder, (layer, package) in FOLDERS.items():
        for path in sorted((root / folder).rglob("*.py")):
            if "__pycache__" in path.parts:
                continue
            parts = list(path.relative_to(root / folder).with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            parts = [p for p in parts if p != "__init__"]
            plugin = ""
            if folder == "builtin_plugins" and len(parts) >= 1 and (
                    root / folder / parts[0]).is_dir():
                plugin = f"{folder}/{parts[0]}"
            elif folder == "plugins" and len(parts) >= 2:
                plugin = f"{folder}/{parts[0]}/{parts[1]}"
            found.append(Module(".".join([package, *parts]), path, layer, plugin, is_package))
    return found


def _facade() -> set[str]:
    import hermes_agent

    return set(hermes_agent.__all__)


def imports(found: list[Module]) -> list[Import]:
    by_name = {m.name: m for m in found}
    facade = _facade()
    result = []
    for module in found:
        package = module.name if module.is_package else module.name.rpartition(".")[0]
        for node in ast.walk(ast.parse(module.path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                pairs = [(alias.name, None) for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    base = ".".join([*up, base] if base else up)
                pairs = [(base, alias.name) for alias in node.names]
            else:
                continue
            for base, name in pairs:
                target, kind = _classify(module, base, name, by_name, facade)
                result.append(Import(module, target, kind, node.lineno))
    return result


def _classify(module: Module, base: str, name: str | None, by_name: dict[str, Module],
              facade: set[str]) -> tuple[str, str]:
    if base != "hermes_agent" and not base.startswith("hermes_agent."):
        return base.split(".")[0], "library"
    if base == "hermes_agent" and name is not None:
        if name == "api":
            return "hermes_agent.api", "api"
        if f"hermes_agent.{name}" in by_name and name not in facade:
            base = f"hermes_agent.{name}"  # `from hermes_agent import kernel`: a module
        else:
            return f"hermes_agent.{name}", "facade" if name in facade else "kernel"
    full = f"{base}.{name}" if name else base
    target = full if full in by_name else base
    while target not in by_name and "." in target:
        target = target.rpartition(".")[0]
    found = by_name.get(target)
    if found is None:
        return target, "unknown"
    if found.layer == "plugins" and found.plugin == module.plugin:
        return target, "own plugin"
    if target == "hermes_agent":  # `import hermes_agent`, or a module of it not found
        return (target, "facade") if full == "hermes_agent" else (base, "kernel")
    return target, found.layer


def violations(root: Path = REPO) -> list[str]:
    bad = []
    for imp in imports(modules(root)):
        source = imp.source
        if imp.kind == "library":
            if source.layer == "api" and imp.target in IO_LIBRARIES:
                bad.append(f"{source.name}:{imp.line} imports {imp.target}: the api does no I/O")
            continue
        if imp.kind not in ALLOWED[source.layer]:
            bad.append(f"{source.name}:{imp.line} ({source.layer}) imports {imp.target} "
                       f"({imp.kind})")
    return bad


def graph_table() -> str:
    """Modules per layer and imports between layers, as a markdown table."""
    found = modules()
    layer_of = {m.name: m.layer for m in found}
    counts = Counter(m.layer for m in found if m.layer != "testing")
    edges: Counter[tuple[str, str]] = Counter()
    for imp in imports(found):
        if imp.kind == "library" or imp.source.layer == "testing":
            continue
        into = layer_of.get(imp.target, "kernel")
        if imp.source.layer != into:
            edges[(imp.source.layer, into)] += 1
    rows = ["| layer | modules | imports into the layers below |", "|---|---|---|"]
    for layer in reversed(ORDER):
        below = ", ".join(f"{other} {edges[(layer, other)]}" for other in reversed(ORDER)
                          if edges[(layer, other)]) or "none"
        rows.append(f"| {layer} | {counts[layer]} | {below} |")
    upward = sum(n for (a, b), n in edges.items() if ORDER.index(b) > ORDER.index(a))
    rows.append("")
    rows.append(f"Imports going up a layer: {upward}.")
    return "\n".join(rows)


def test_no_layer_imports_one_above_it_or_a_kernel_module_across_the_line() -> None:
    assert len(modules()) > 300
    assert violations() == []


def test_every_folder_under_builtin_plugins_is_a_plugin() -> None:
    root = REPO / "builtin_plugins"
    loose = sorted(p.name for p in root.glob("*.py") if p.name != "__init__.py")
    assert loose == []
    folders = [p for p in root.iterdir() if p.is_dir() and p.name != "__pycache__"]
    assert len(folders) >= 10
    assert [p.name for p in folders if not (p / "plugin.yaml").is_file()] == []


def test_the_checker_catches_each_kind_of_breach(tmp_path: Path) -> None:
    """Planted in a tree of the same layout, every forbidden import is reported, and the
    allowed ones are not."""
    files = {
        "hookspecs/__init__.py": "from hermes_agent.api import Usage\n",
        "kernel/__init__.py": "from .hookspecs import markers\n",
        "kernel/config.py": "import yaml\n",
        "api/__init__.py": "import sqlite3\nfrom hermes_agent.config import x\n"
                           "from hermes_agent import Kernel\n",
        "kits/http.py": "from hermes_agent.cli import root\nfrom hermes_agent.api import Usage\n",
        "builtin_plugins/__init__.py": "",
        "builtin_plugins/agent/__init__.py": "from hermes_agent.builtin_plugins.gateway import a\n"
                                             "from .loop import run\nfrom hermes_agent.kits import http\n",
        "builtin_plugins/agent/loop.py": "from ..gateway import a\n",
        "builtin_plugins/gateway/__init__.py": "",
        "cli/__init__.py": "", "cli/root.py": "from hermes_agent.home import y\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    found = [line.split(" imports ")[1] for line in violations(tmp_path)]
    assert sorted(found) == sorted([
        "hermes_agent.api (api)",  # hookspecs -> api
        "sqlite3: the api does no I/O", "hermes_agent.config (kernel)",  # api
        "hermes_agent.cli.root (cli)",  # kits -> cli
        "hermes_agent.builtin_plugins.gateway (plugins)",  # plugin -> plugin, absolute
        "hermes_agent.builtin_plugins.gateway (plugins)",  # ... and relative
        "hermes_agent.home (kernel)",  # cli -> a kernel module
    ])


def test_docs_architecture_carries_the_current_import_graph() -> None:
    text = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    assert graph_table() in text, "run `python tests/test_layers.py` and paste its table"
    assert "Imports going up a layer: 0." in text


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    print(graph_table())

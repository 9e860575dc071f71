"""No import circles: every folder of the installed package reads top-down. The parts of a
class receive what they need (a Protocol, a callable, a small dataclass of a lower module)
instead of importing the class's module.

Every import counts: at module level, inside a function, under ``if TYPE_CHECKING:``. A
deferred import hides a circle from Python, not from a reader. A package's ``__init__`` is
the package's face (it hands names on), not a module of its own here: importing a package
is not an edge.
"""

from __future__ import annotations

import ast
import functools
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Module:
    name: str  # as installed: hermes_agent.builtin_plugins.agent.loop
    path: Path
    is_package: bool  # an __init__.py

    @property
    def package(self) -> str:
        """The package relative imports start from."""
        return self.name if self.is_package else self.name.rpartition(".")[0]


def package_dirs(root: Path) -> dict[str, Path]:
    """The folder of each installed package (pyproject's ``[tool.setuptools.package-dir]``:
    kernel/ is hermes_agent, api/ is hermes_agent.api, ...)."""
    pyproject = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    return {package: root / folder
            for package, folder in pyproject["tool"]["setuptools"]["package-dir"].items()}


def modules_of(root: Path, layout: dict[str, Path] | None = None) -> dict[str, Module]:
    """Every module of the installed layout, by its installed name. The folders under
    plugins/ are loaded by path, and named here as under hermes_agent.plugins."""
    found: dict[str, Module] = {}
    for package, folder in (layout if layout is not None else package_dirs(root)).items():
        for path in sorted(folder.rglob("*.py")):
            relative = path.relative_to(folder)
            if "__pycache__" in relative.parts:
                continue
            parts = list(relative.parts[:-1])
            if path.stem != "__init__":
                parts.append(path.stem)
            name = ".".join([package, *parts])
            found[name] = Module(name, path, path.stem == "__init__")
    return found


def imported(module: Module) -> set[str]:
    """The dotted names a module imports, anywhere in it; ``from X import n`` gives X and
    X.n (n may be a module of package X)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(module.path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                package = module.package.split(".")
                base = ".".join(package[:len(package) - node.level + 1]
                                + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return names


def import_graph(modules: dict[str, Module]) -> dict[str, set[str]]:
    """module -> the modules (not packages) it imports."""
    graph: dict[str, set[str]] = {}
    for name, module in modules.items():
        targets = set()
        for dotted in imported(module):
            while dotted and dotted not in modules:  # a name in a module: the module
                dotted = dotted.rpartition(".")[0]
            if dotted and dotted != name and not modules[dotted].is_package:
                targets.add(dotted)
        graph[name] = targets
    return graph


def circles_in(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm,
    with an explicit stack: no recursion limit)."""
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []
    for start in sorted(graph):
        if start in order:
            continue
        work = [(start, iter(sorted(graph[start])))]
        order[start] = low[start] = len(order)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, targets = work[-1]
            for target in targets:
                if target not in order:
                    order[target] = low[target] = len(order)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph.get(target, ())))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], order[target])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == order[node]:
                    component = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(frozenset(component))
    return found


@functools.lru_cache(maxsize=1)
def installed_circles() -> tuple[frozenset[str], ...]:
    return tuple(circles_in(import_graph(modules_of(ROOT))))


def _named(circles: list[frozenset[str]] | tuple[frozenset[str], ...]) -> list[str]:
    return sorted(" <-> ".join(sorted(circle)) for circle in circles)


def test_the_layout_is_read_as_installed() -> None:
    modules = modules_of(ROOT)
    for name in ("hermes_agent.kernel", "hermes_agent.kits.sql.rows",
                 "hermes_agent.builtin_plugins.agent.loop",
                 "hermes_agent.plugins.session-stores.postgres.store",
                 "hermes_agent.testing.fake_discord.server"):
        assert name in modules, name
    assert modules["hermes_agent.builtin_plugins.agent"].is_package
    graph = import_graph(modules)
    loop = graph["hermes_agent.builtin_plugins.agent.loop"]
    assert "hermes_agent.builtin_plugins.agent.context_link" in loop  # from . import ...
    assert not any(modules[target].is_package for target in loop)
    store = graph["hermes_agent.builtin_plugins.sessions.store"]
    assert "hermes_agent.builtin_plugins.sessions.search" in store  # inside a method


@pytest.mark.parametrize("importer", [
    "from .b import VALUE\n",
    "def later():\n    from . import b\n    return b\n",
    "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .b import VALUE\n",
    "import pkg.b\n",
])
def test_a_circle_is_found_however_the_import_is_written(tmp_path: Path, importer: str) -> None:
    folder = tmp_path / "pkg"
    (folder / "sub").mkdir(parents=True)
    (folder / "__init__.py").write_text("from .a import NAME\nfrom .sub.c import OTHER\n")
    (folder / "a.py").write_text(importer + "NAME = 1\n")
    (folder / "b.py").write_text("from .sub import c\nVALUE = 2\n")
    (folder / "sub" / "__init__.py").write_text("")
    (folder / "sub" / "c.py").write_text("from ..a import NAME\nOTHER = 3\n")
    circles = circles_in(import_graph(modules_of(tmp_path, {"pkg": folder})))
    assert circles == [frozenset({"pkg.a", "pkg.b", "pkg.sub.c"})]


def test_a_package_that_hands_names_on_is_no_part_of_a_circle(tmp_path: Path) -> None:
    folder = tmp_path / "pkg"
    folder.mkdir()
    (folder / "__init__.py").write_text("from .a import NAME\n")
    (folder / "a.py").write_text("NAME = 1\n")
    (folder / "b.py").write_text("from . import NAME\nfrom .a import NAME as SAME\n")
    (folder / "c.py").write_text("import pkg\n")
    graph = import_graph(modules_of(tmp_path, {"pkg": folder}))
    assert graph["pkg.b"] == {"pkg.a"} and graph["pkg.c"] == set()
    assert circles_in(graph) == []


def test_no_import_circles_in_the_installed_package() -> None:
    """Every layer and every plugin reads top-down: not one circle, with no allowance."""
    assert _named(list(installed_circles())) == []

"""The kernel knows no plugin: what it needs from one (essential, CLI commands, config
sections) it reads from the plugin's plugin.yaml."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

KERNEL = Path(__file__).resolve().parent.parent / "kernel"
PLUGIN_PACKAGES = ("builtin_plugins", "plugins", "hermes_plugins")


def imports_of(path: Path) -> list[tuple[str, list[str]]]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            found.append(("." * node.level + (node.module or ""), [a.name for a in node.names]))
        elif isinstance(node, ast.Import):
            found.extend((alias.name, []) for alias in node.names)
    return found


# The one import left for the facade rewrite (issue 15, item 3); delete with it.
PENDING = ["__init__.py: .builtin_plugins PUBLIC_API"]


def test_kernel_imports_no_plugin_code() -> None:
    """No module under kernel/ imports builtin_plugins/ or plugins/, with no exception."""
    offenders = []
    for path in sorted(KERNEL.rglob("*.py")):
        for module, names in imports_of(path):
            if module.startswith("."):  # relative: inside hermes_agent
                base = module.lstrip(".")
            elif module == "hermes_agent" or module.startswith("hermes_agent."):
                base = module.removeprefix("hermes_agent").lstrip(".")
            else:
                base = module
            for target in (base, *(f"{base}.{name}".lstrip(".") for name in names)):
                if target.split(".")[0] in PLUGIN_PACKAGES:
                    offenders.append(f"{path.name}: {module} {', '.join(names)}".strip())
                    break
    if offenders == PENDING:  # exactly that one: any other offender fails
        pytest.xfail("kernel/__init__.py still reads builtin_plugins.PUBLIC_API")
    assert offenders == []


def test_kernel_imports_no_sdk_at_module_level() -> None:
    for path in sorted(KERNEL.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        top = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
        names = {a.name.split(".")[0] for n in top if isinstance(n, ast.Import) for a in n.names}
        names |= {(n.module or "").split(".")[0] for n in top if isinstance(n, ast.ImportFrom)}
        assert not names & {"openai", "anthropic", "httpx"}, path.name


def test_builtin_plugins_reach_each_other_only_through_the_public_api() -> None:
    """A builtin plugin imports another's names from ``hermes_agent``, like any plugin."""
    root = KERNEL.parent / "builtin_plugins"
    plugins = {p.parent.name for p in root.glob("*/plugin.yaml")}
    offenders = []
    for path in sorted(root.rglob("*.py")):
        own = path.relative_to(root).parts[0]
        for module, _ in imports_of(path):
            parts = module.lstrip(".").split(".")
            depth = len(module) - len(module.lstrip("."))
            nested = len(path.relative_to(root).parts) - 1  # folders below builtin_plugins/
            target = None
            if module.startswith("hermes_agent.builtin_plugins."):
                target = parts[2]
            elif depth > nested and parts[0]:  # climbs out of its own plugin
                target = parts[0]
            if target in plugins and target != own:
                offenders.append(f"{path.relative_to(root)}: {module}")
    assert offenders == []

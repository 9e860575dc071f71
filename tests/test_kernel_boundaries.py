"""The kernel knows no plugin: it reads only the tables the builtin package declares."""

from __future__ import annotations

import ast
from pathlib import Path

KERNEL = Path(__file__).resolve().parent.parent / "kernel"
TABLES = {"ESSENTIAL", "CLI_COMMANDS", "CONFIG_SECTIONS", "PUBLIC_API"}


def imports_of(path: Path) -> list[tuple[str, list[str]]]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            found.append(("." * node.level + (node.module or ""), [a.name for a in node.names]))
        elif isinstance(node, ast.Import):
            found.extend((alias.name, []) for alias in node.names)
    return found


def test_kernel_imports_no_plugin_code() -> None:
    offenders = []
    for path in sorted(KERNEL.rglob("*.py")):
        if path.name == "cli.py":  # the console-script entry point re-exports the CLI root
            continue
        for module, names in imports_of(path):
            if module.endswith("builtin_plugins") and module.startswith("."):
                if path.name == "discovery.py" and names == ["builtin_plugins"]:
                    continue  # locating the builtin folder for discovery
                if set(names) - TABLES:
                    offenders.append(f"{path.name}: from {module} import {', '.join(names)}")
            elif "builtin_plugins." in module or module.startswith(("hermes_plugins", "plugins")):
                offenders.append(f"{path.name}: import {module}")
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

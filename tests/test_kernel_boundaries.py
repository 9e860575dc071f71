"""The kernel knows no plugin: what it needs from one (essential, CLI commands, config
sections) it reads from the plugin's plugin.yaml."""

from __future__ import annotations

import ast
from pathlib import Path


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
    assert offenders == []


def test_kernel_imports_no_sdk_at_module_level() -> None:
    for path in sorted(KERNEL.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        top = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
        names = {a.name.split(".")[0] for n in top if isinstance(n, ast.Import) for a in n.names}
        names |= {(n.module or "").split(".")[0] for n in top if isinstance(n, ast.ImportFrom)}
        assert not names & {"openai", "anthropic", "httpx"}, path.name


def _plugin_folders() -> list[tuple[str, Path]]:
    """(import prefix, folder) of every builtin and bundled plugin."""
    root = KERNEL.parent
    found = [(f"hermes_agent.builtin_plugins.{p.parent.name}", p.parent)
             for p in sorted((root / "builtin_plugins").glob("*/plugin.yaml"))]
    found += [("", p.parent) for p in sorted((root / "plugins").glob("*/*/plugin.yaml"))]
    return found


def test_plugins_import_only_the_facade_the_api_kits_their_own_modules_and_libraries() -> None:
    """A builtin or bundled plugin reaches the kernel through ``hermes_agent`` (its entry
    points), shared contracts through ``hermes_agent.api``, shared implementation through
    ``hermes_agent.kits``, other plugins through slots, services and hooks - never through
    another plugin's or the kernel's modules."""
    import hermes_agent

    facade = set(hermes_agent.__all__)
    offenders = []
    plugins = _plugin_folders()
    assert len(plugins) >= 6
    for own_prefix, folder in plugins:
        for path in sorted(folder.rglob("*.py")):
            depth_in_plugin = len(path.relative_to(folder).parts) - 1
            where = f"{path.relative_to(KERNEL.parent)}"
            for module, names in imports_of(path):
                level = len(module) - len(module.lstrip("."))
                absolute = module.lstrip(".")
                if level:  # relative: must stay inside the plugin's own folder
                    if level - 1 > depth_in_plugin:
                        offenders.append(f"{where}: from {module} (leaves the plugin)")
                elif absolute == "hermes_agent":
                    if set(names) - facade:
                        offenders.append(f"{where}: from hermes_agent import "
                                         f"{', '.join(sorted(set(names) - facade))}")
                elif absolute == "hermes_agent.api" or absolute == "hermes_agent.kits" or \
                        absolute.startswith("hermes_agent.kits."):
                    continue
                elif absolute.startswith("hermes_agent"):
                    if not (own_prefix and (absolute == own_prefix
                                            or absolute.startswith(own_prefix + "."))):
                        offenders.append(f"{where}: import {absolute}")
    assert offenders == []


def test_the_cli_imports_only_the_facade_the_api_and_kits() -> None:
    """The ``hermes`` command (``cli/``) is the shell on top: it drives the kernel through
    ``from hermes_agent import ...`` names, and uses the api and kits; it imports no kernel
    module and no plugin (plugins' commands are found through their plugin.yaml)."""
    import hermes_agent

    facade = set(hermes_agent.__all__)
    offenders = []
    for path in sorted((KERNEL.parent / "cli").rglob("*.py")):
        where = f"{path.relative_to(KERNEL.parent)}"
        for module, names in imports_of(path):
            absolute = module.lstrip(".")
            if module.startswith("."):  # relative: stays in cli/
                if len(module) - len(absolute) > 1:
                    offenders.append(f"{where}: from {module} (leaves cli/)")
            elif absolute == "hermes_agent":
                if set(names) - facade:
                    offenders.append(f"{where}: from hermes_agent import "
                                     f"{', '.join(sorted(set(names) - facade))}")
            elif absolute == "hermes_agent.api" or absolute.startswith(
                    ("hermes_agent.kits.", "hermes_agent.cli.")):
                continue
            elif absolute.startswith("hermes_agent."):
                offenders.append(f"{where}: import {absolute}")
    assert offenders == []
    assert (KERNEL.parent / "cli" / "root.py").is_file()


def test_every_folder_under_builtin_plugins_is_a_plugin() -> None:
    """``builtin_plugins/`` holds its ``__init__.py`` and plugin folders, each with a
    plugin.yaml: nothing there escapes the boundary test above for want of a manifest."""
    root = KERNEL.parent / "builtin_plugins"
    entries = [p for p in sorted(root.iterdir()) if p.name != "__pycache__"]
    folders = [p.name for p in entries if p.is_dir()]
    assert len(folders) >= 6
    assert [name for name in folders if not (root / name / "plugin.yaml").is_file()] == []
    loose = [p.name for p in entries if not p.is_dir() and p.name != "__init__.py"]
    assert loose == []


def test_the_facade_exports_entry_points_only_and_the_api_the_contracts() -> None:
    import hermes_agent
    import hermes_agent.api as api

    assert len(hermes_agent.__all__) <= 48
    for name in hermes_agent.__all__:
        assert getattr(hermes_agent, name) is not None, name
    assert hermes_agent.api is api
    for name in api.__all__:
        assert getattr(api, name) is not None, name
    assert not set(hermes_agent.__all__) & set(api.__all__) - {"api"}
    for internal in ("runtime_kernel", "truthy", "HookBus", "Registration",
                     "Agent", "SqliteSessionStore", "approval_gate", "set_env_values"):
        assert not hasattr(hermes_agent, internal), internal


def test_the_api_imports_no_plugin_and_the_kernel_imports_no_api() -> None:
    for path in sorted((KERNEL.parent / "api").rglob("*.py")):
        for module, _ in imports_of(path):
            assert "builtin_plugins" not in module and not module.startswith("plugins"), path
    for path in sorted(KERNEL.rglob("*.py")):
        for module, _ in imports_of(path):
            assert module not in (".api", "hermes_agent.api"), path.name
            assert not module.startswith((".api.", "hermes_agent.api.")), path.name


def test_hook_payload_types_in_the_api_are_the_hookspecs_ones() -> None:
    import hermes_agent.api as api
    from hermes_agent.hookspecs import payloads

    assert set(payloads.__all__) <= set(api.__all__)
    assert api.BlockDirective is payloads.BlockDirective


def test_every_public_name_is_documented_in_docs_api_md() -> None:
    import re

    import hermes_agent
    import hermes_agent.api as api

    text = (KERNEL.parent / "docs" / "api.md").read_text(encoding="utf-8")
    facade_part, _, api_part = text.partition("## hermes_agent.api")
    documented = set(re.findall(r"`([A-Za-z_][A-Za-z0-9_]*)`", facade_part.partition(
        "## hermes_agent\n")[2]))
    assert set(hermes_agent.__all__) <= documented
    assert set(api.__all__) <= set(re.findall(r"`([A-Za-z_][A-Za-z0-9_]*)`", api_part))
    assert (KERNEL.parent / "docs" / "architecture.md").is_file()

"""The kernel's face: the facade exports entry points only, the api the contracts, each
documented; the kernel imports no SDK at start-up. What each layer may import is
tests/test_layers.py's."""

from __future__ import annotations

import ast
from pathlib import Path


KERNEL = Path(__file__).resolve().parent.parent / "kernel"


def test_kernel_imports_no_sdk_at_module_level() -> None:
    for path in sorted(KERNEL.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        top = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
        names = {a.name.split(".")[0] for n in top if isinstance(n, ast.Import) for a in n.names}
        names |= {(n.module or "").split(".")[0] for n in top if isinstance(n, ast.ImportFrom)}
        assert not names & {"openai", "anthropic", "httpx"}, path.name


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

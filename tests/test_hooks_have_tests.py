"""Every hook has a dispatch test: a function named ``test_hook_<name>`` somewhere in tests/."""

from __future__ import annotations

import ast
from pathlib import Path

from hermes_agent.hookspecs import EVENT_HOOKS, REGISTRATION_HOOKS

TESTS = Path(__file__).resolve().parent


def defined_test_names() -> set[str]:
    """Names of all (async) functions defined in tests/*.py, at any nesting level."""
    names: set[str] = set()
    for path in sorted(TESTS.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        names.update(node.name for node in ast.walk(tree)
                     if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                     and node.name.startswith("test_"))
    return names


def test_every_hook_has_a_test() -> None:
    defined = defined_test_names()
    missing = [hook for hook in (*EVENT_HOOKS, *REGISTRATION_HOOKS)
               if f"test_hook_{hook}" not in defined]
    assert not missing, ("hooks without a test_hook_<name> test in tests/*.py: "
                         + ", ".join(missing))

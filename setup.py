"""Maps the repository's top-level folders onto the single package ``hermes_agent``.

The package list is computed from the tree, so a new sub-package can never be left
out of the wheel (tests/test_packaging.py checks the built wheel).
"""

from pathlib import Path

from setuptools import setup

ROOTS = {
    "hermes_agent": "kernel",
    "hermes_agent.hookspecs": "hookspecs",
    "hermes_agent.api": "api",
    "hermes_agent.kits": "kits",
    "hermes_agent.cli": "cli",
    "hermes_agent.builtin_plugins": "builtin_plugins",
    "hermes_agent.testing": "testing",
}


def _packages() -> list[str]:
    found = ["hermes_agent.plugins"]  # bundled plugins: data, loaded by path
    for package, folder in ROOTS.items():
        for init in sorted(Path(folder).rglob("__init__.py")):
            if "__pycache__" in init.parts:
                continue
            rel = init.parent.relative_to(folder).parts
            found.append(".".join((package, *rel)))
    return found


setup(packages=_packages())

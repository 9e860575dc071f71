"""`hermes plugins new NAME [--kind ...]`: a pip-installable plugin project that passes its
own test as generated.

    hermes-plugin-NAME/
    ├── pyproject.toml          # entry point in the hermes_agent.plugins group
    ├── README.md
    ├── src/hermes_NAME/
    │   ├── __init__.py         # register(ctx)
    │   ├── plugin.yaml         # shipped as package data
    │   ├── schemas.py          # tool schemas, or the settings the plugin reads
    │   └── handlers.py         # tool handlers, hook callbacks or the provider
    └── tests/test_plugin.py    # uses hermes_agent.testing
"""

from __future__ import annotations

import re
from pathlib import Path

import click

from hermes_agent import __version__

from .scaffold_kinds import KINDS

_NAME = re.compile(r"^[a-z][a-z0-9_-]*[a-z0-9]\Z")

PYPROJECT = '''\
[build-system]
requires = ["setuptools>=64"]
build-backend = "setuptools.build_meta"

[project]
name = "__DIST__"
version = "0.1.0"
description = "A hermes plugin: __NAME__"
readme = "README.md"
requires-python = ">=3.11"
dependencies = ["hermes-agent-runtime>=__HERMES__"]

[project.optional-dependencies]
test = ["pytest>=8"]

# hermes discovers the plugin through this entry point (no code runs until it is enabled).
[project.entry-points."hermes_agent.plugins"]
__NAME__ = "__PKG__"

[tool.setuptools.packages.find]
where = ["src"]

[tool.setuptools.package-data]
__PKG__ = ["plugin.yaml"]

[tool.pytest.ini_options]
testpaths = ["tests"]
'''

MANIFEST = '''\
name: __NAME__
version: 0.1.0
description: A hermes plugin (__KIND_LABEL__).
author: ""
kind: __KIND__
requires_hermes: ">=__HERMES__"
__EXTRA__'''

INIT = '''\
"""__NAME__: a hermes plugin. hermes calls register(ctx) once, when the plugin loads."""

from . import handlers, schemas


def register(ctx):
__BODY__'''

TEST = '''\
"""Tests using hermes_agent.testing: a fresh kernel per test, nothing global touched."""

import json
from pathlib import Path

import pytest
import yaml

import __PKG__ as plugin
from hermes_agent.testing import make_kernel

MANIFEST = yaml.safe_load((Path(plugin.__file__).parent / "plugin.yaml").read_text())


@pytest.fixture
def kernel(tmp_path):
    kernel = make_kernel(tmp_path / "hermes-home")
    status = kernel.register_plugin(plugin, MANIFEST["name"])
    assert status.state == "loaded", status.reason
    return kernel


def test_registers_what_plugin_yaml_declares(kernel):
    status = kernel.plugins[MANIFEST["name"]]
    assert sorted(status.tools) == sorted(MANIFEST.get("provides_tools", []))
    assert sorted(status.hooks) == sorted(MANIFEST.get("provides_hooks", []))


__TESTS__'''

README = '''\
# __DIST__

A [hermes](https://pypi.org/project/hermes-agent-runtime/) plugin (__KIND_LABEL__).

## Install and enable

    hermes plugins install __DIST__        # from PyPI, once published as a wheel
    hermes plugins install --allow-build path/to/this/folder   # builds it (runs its build)
    hermes plugins enable __NAME__
    hermes plugins doctor __NAME__

## Develop

    pip install -e '.[test]'
    pytest
    hermes plugins validate .              # manifest + declared-vs-registered check

Edit `src/__PKG__/plugin.yaml` whenever the plugin registers a new tool or hook: hermes
compares the declaration with what the plugin registers on every load.

## Publish

    python -m build && twine upload dist/*
'''

LABELS = {"tool": "a tool", "hook": "lifecycle hooks", "memory": "a memory provider",
          "model-provider": "a model provider", "web": "a web search provider",
          "platform": "a platform adapter"}


def scaffold(name: str, kind: str, parent: Path) -> Path:
    if not _NAME.match(name):
        raise click.ClickException(f"{name!r} is not a usable plugin name: use lower-case letters, "
                                   "digits, '-' and '_', starting with a letter (e.g. weather-alerts)")
    slug = name.replace("-", "_")
    dist = f"hermes-plugin-{name.replace('_', '-')}"
    root = parent / dist
    if root.exists():
        raise click.ClickException(f"{root} already exists; choose another name or folder")
    manifest_kind, extra, schemas, handlers, body, tests = KINDS[kind]
    klass = "".join(part.capitalize() for part in re.split(r"[-_]", name))
    values = {"__DIST__": dist, "__PKG__": f"hermes_{slug}", "__SLUG__": slug, "__NAME__": name,
              "__CLASS_UPPER__": slug.upper(), "__CLASS__": klass, "__KIND__": manifest_kind,
              "__KIND_LABEL__": LABELS[kind], "__HERMES__": __version__, "__EXTRA__": extra,
              "__BODY__": body, "__TESTS__": tests}
    package = root / "src" / f"hermes_{slug}"
    files = {root / "pyproject.toml": PYPROJECT, root / "README.md": README,
             root / "tests" / "test_plugin.py": TEST, package / "__init__.py": INIT,
             package / "plugin.yaml": MANIFEST, package / "schemas.py": schemas,
             package / "handlers.py": handlers}
    for path, template in files.items():
        text = template
        for _ in range(2):  # templates inserted by the first pass carry placeholders too
            for key, value in values.items():
                text = text.replace(key, value)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root

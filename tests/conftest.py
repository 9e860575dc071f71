"""Shared fixtures: every test gets its own HERMES_HOME and no real home is touched."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture(autouse=True)
def _restore_environ() -> Iterator[None]:
    """A kernel on the process environment exports $HERMES_HOME/.env into os.environ;
    give each test the environment it started with."""
    saved = dict(os.environ)
    yield
    if os.environ != saved:
        os.environ.clear()
        os.environ.update(saved)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh HERMES_HOME (also exported, for CLI tests)."""
    path = tmp_path / "hermes-home"
    (path / "plugins").mkdir(parents=True)
    monkeypatch.setenv("HERMES_HOME", str(path))
    for var in ("HERMES_LOAD_PLUGINS", "HERMES_SAFE_MODE", "HERMES_ENABLE_PROJECT_PLUGINS",
                "HERMES_TRACE_HOOKS", "HERMES_BUNDLED_PLUGINS"):
        monkeypatch.delenv(var, raising=False)
    return path


@pytest.fixture
def calculator(home: Path) -> Path:
    """The seed guide's calculator plugin, copied unmodified into $HERMES_HOME/plugins/."""
    target = home / "plugins" / "calculator"
    shutil.copytree(FIXTURES / "calculator", target)
    return target


@pytest.fixture(autouse=True)
def _no_process_kernel() -> Iterator[None]:
    """Each test starts without the process kernel an earlier test's command built."""
    from hermes_agent.builtin_plugins.cli_process import forget_runtime_kernel

    forget_runtime_kernel()
    yield
    forget_runtime_kernel()

"""Fixtures: a kernel with the core-tools plugin and a helper that calls a tool like the loop."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import hermes_agent.builtin_plugins.core_tools as core_tools
from hermes_agent import Kernel
from hermes_agent.api import ToolCallContext
from hermes_agent.testing import make_kernel


def core_kernel(home: Path, config: dict[str, Any] | None = None) -> Kernel:
    kernel = make_kernel(home, config=config)
    status = kernel.register_plugin(core_tools, "core-tools")
    assert status.state == "loaded", status.reason
    return kernel


#: a Python interpreter sandboxed commands can run: the one behind this venv (for stdlib-only
#: commands), since the venv may sit under the host's /tmp, which the sandbox replaces
SANDBOX_PYTHON = os.path.realpath(getattr(sys, "_base_executable", "") or sys.executable)

#: the kernel fixture's config for a test of today's file tools without the sandbox's
#: boundary (``@pytest.mark.parametrize("kernel", [SANDBOX_OFF], indirect=True)``)
SANDBOX_OFF = {"sandbox": {"mode": "off"}}


@pytest.fixture
def kernel(tmp_path: Path, request: pytest.FixtureRequest) -> Kernel:
    return core_kernel(tmp_path / "home", config=getattr(request, "param", None))


@pytest.fixture
def work(tmp_path: Path) -> Path:
    path = tmp_path / "work"
    path.mkdir()
    return path


@pytest.fixture
def fake_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fake, empty ``$HOME`` with ``$HERMES_HOME`` at its default place, ``~/.hermes``
    (the danger corpus spells hermes's home so)."""
    home = tmp_path / "fakehome"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("HERMES_HOME", str(home / ".hermes"))
    return home


@pytest.fixture
def fake_home_cwd(work: Path, fake_home: Path) -> str:
    """A working directory (as the danger analyser takes it) under ``fake_home``."""
    return str(work)


Call = Callable[..., dict[str, Any]]


@pytest.fixture
def call(kernel: Kernel, work: Path) -> Call:
    """``call(tool, args, **fields)``: dispatch with a context like the loop's (cwd = work;
    ``fields`` are more ToolCallContext fields), parse JSON."""

    def run(tool: str, args: dict[str, Any], **fields: Any) -> dict[str, Any]:
        context = ToolCallContext(session_id=fields.pop("session_id", "s1"), task_id="t1",
                                  turn_id="turn1", tool_call_id="c1", platform="cli",
                                  cwd=Path(fields.pop("cwd", work)).resolve(), **fields)
        return json.loads(kernel.tools.dispatch(tool, args, context=context))

    return run

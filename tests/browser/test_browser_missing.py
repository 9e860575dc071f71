"""Without Playwright or without a Chromium the tools say how to install them; the plugin
never imports Playwright at start-up."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hermes_agent.testing import make_kernel

from .site import needs_browser

# Playwright made unimportable, as on a machine without the extra: an import hook that hides it
HIDE = """
import importlib.abc, sys
class Hide(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "playwright" or name.startswith("playwright."):
            raise ModuleNotFoundError(f"No module named {name!r}")
sys.meta_path.insert(0, Hide())
"""


def run(code: str, home: Path) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, env={"HERMES_HOME": str(home), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_without_playwright_the_error_names_the_extra(tmp_path: Path) -> None:
    out = run(HIDE + f"""
import json
from hermes_agent.testing import make_kernel
kernel = make_kernel({str(tmp_path)!r}, builtins=True)
assert kernel.tools.tools["browser_navigate"].check_fn() is False  # hidden from the model
print(kernel.tools.dispatch("browser_navigate", {{"url": "http://93.184.216.34/"}}))
""", tmp_path)
    error = json.loads(out.splitlines()[-1])
    assert error["kind"] == "missing_dependency"
    assert "pip install 'hermes-agent-runtime[browser]'" in error["error"]


def test_start_up_does_not_import_playwright(tmp_path: Path) -> None:
    out = run(f"""
import sys
from hermes_agent.testing import make_kernel
kernel = make_kernel({str(tmp_path)!r}, builtins=True)
assert "browser_navigate" in kernel.tools.tools
print(sorted(m for m in sys.modules if m.startswith("playwright")))
""", tmp_path)
    assert out.strip() == "[]"


@needs_browser()
def test_a_missing_chromium_names_the_package(tmp_path: Path) -> None:
    kernel: Any = make_kernel(tmp_path, config={"browser": {"executable": "/nowhere/chromium"}},
                              env={"HERMES_HOME": str(tmp_path)}, builtins=True)
    try:
        error = json.loads(kernel.tools.dispatch("browser_navigate",
                                                 {"url": "http://93.184.216.34/"}))
        assert error["kind"] == "missing_dependency"
        assert "apt-get install chromium" in error["error"]
        assert "browser.executable" in error["error"]
    finally:
        kernel.close()


def test_the_tools_are_hidden_when_they_cannot_work(tmp_path: Path) -> None:
    kernel: Any = make_kernel(tmp_path, config={"browser": {"executable": "/nowhere/chromium"}},
                              env={"HERMES_HOME": str(tmp_path)}, builtins=True)
    try:
        spec = kernel.tools.tools["browser_navigate"]
        assert spec.check_fn is not None and spec.check_fn() is False
    finally:
        kernel.close()



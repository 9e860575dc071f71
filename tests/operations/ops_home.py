"""Helpers of the operations tests: a private home, sessions written through the session
store's interface, and the real `hermes` command in a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from hermes_agent.api import session_store
from hermes_agent.testing import make_kernel


@dataclass
class Run:
    code: int
    out: str
    err: str


def hermes_argv() -> list[str]:
    script = Path(sys.executable).parent / "hermes"
    return [str(script)] if script.is_file() else [sys.executable, "-m", "hermes_agent.cli.root"]


def environ(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HERMES_")}
    env.update({"HERMES_HOME": str(home), "XDG_STATE_HOME": str(home.parent / "state"),
                "COLUMNS": "200"})
    env.update(extra)
    return env


def hermes(home: Path, *args: str, cwd: Path | None = None, timeout: float = 120,
           **extra: str) -> Run:
    """``hermes ARGS`` run by the console script in a new process on ``home``."""
    done = subprocess.run([*hermes_argv(), *args], env=environ(home, **extra),
                          capture_output=True, text=True, timeout=timeout,
                          cwd=cwd or home.parent)
    return Run(done.returncode, done.stdout, done.stderr)


def make_home(root: Path, name: str = "home", config: dict[str, Any] | None = None) -> Path:
    home = root / name
    home.mkdir(mode=0o700, parents=True)
    os.chmod(home, 0o700)
    (root / "state").mkdir(mode=0o700, exist_ok=True)
    (home / "config.yaml").write_text(yaml.safe_dump(config if config is not None else {
        "model": {"provider": "custom", "base_url": "http://127.0.0.1:9/v1",
                  "default": "fake-model"}}), encoding="utf-8")
    os.chmod(home / "config.yaml", 0o600)
    return home


def store_of(home: Path) -> Any:
    """The session store a booted kernel of ``home`` selects (its interface, not a class)."""
    kernel = make_kernel(home, builtins=True, env={"XDG_STATE_HOME": str(home.parent / "state")})
    return kernel, session_store(kernel)

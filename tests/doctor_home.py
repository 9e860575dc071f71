"""Helpers of the ``hermes doctor`` tests: a throwaway home and the real CLI in a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml


@dataclass
class Run:
    code: int
    out: str
    err: str

    @property
    def findings(self) -> list[dict[str, Any]]:
        return list(json.loads(self.out)["findings"])

    def named(self, check: str) -> list[dict[str, Any]]:
        """The findings whose check starts with ``check``."""
        return [f for f in self.findings if f["check"].startswith(check)]

    def problems(self) -> list[dict[str, Any]]:
        return [f for f in self.findings if f["status"] == "problem"]


def make_home(root: Path, config: dict[str, Any] | None = None) -> Path:
    """A private home with ``config`` as its config.yaml (a local provider that needs no key
    unless ``config`` names another), and a private folder for the cache key beside it."""
    home = root / "home"
    home.mkdir(mode=0o700)
    os.chmod(home, 0o700)
    state = root / "state"
    state.mkdir(mode=0o700)
    os.chmod(state, 0o700)
    (home / "config.yaml").write_text(yaml.safe_dump(config if config is not None else {
        "model": {"provider": "custom", "base_url": "http://127.0.0.1:9/v1",
                  "default": "fake-model"}}), encoding="utf-8")
    os.chmod(home / "config.yaml", 0o600)
    return home


def doctor(home: Path, *args: str, path: str | None = None, json_out: bool = True,
           env: dict[str, str] | None = None) -> Run:
    """``hermes doctor ARGS`` run by the console script's code in a new process."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("HERMES_")}
    environ.update({"HERMES_HOME": str(home), "XDG_STATE_HOME": str(home.parent / "state")})
    if path is not None:
        environ["PATH"] = path
    environ.update(env or {})
    argv = [sys.executable, "-m", "hermes_agent.cli.root", "doctor", *args]
    if json_out:
        argv.append("--json")
    done = subprocess.run(argv, env=environ, capture_output=True, text=True, timeout=120,
                          cwd=home.parent)
    return Run(done.returncode, done.stdout, done.stderr)

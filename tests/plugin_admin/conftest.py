"""Fixtures of the plugin-admin tests: a throw-away HOME, `hermes` run in-process, and a
throw-away virtualenv."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from adminkit import SECRET
from venvkit import make_venv

from hermes_agent.cli.root import main

@pytest.fixture
def user_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A throw-away HOME with an ~/.ssh key and its own git configuration."""
    path = tmp_path / "userhome"
    (path / ".ssh").mkdir(parents=True)
    (path / ".ssh" / "id_ed25519").write_text(SECRET)
    monkeypatch.setenv("HOME", str(path))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(path / ".gitconfig"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_DISABLE_PIP_VERSION_CHECK", "1")
    return path


@pytest.fixture
def cli(capsys, monkeypatch, home):
    """Runs `hermes ...` in-process (the root conftest restores the environment it changes)."""
    def run(*args: str, input: str = "") -> tuple[int, str, str]:
        monkeypatch.setattr("sys.stdin", io.StringIO(input))
        code = main(list(args))
        out = capsys.readouterr()
        return code, out.out, out.err
    return run


@pytest.fixture(scope="module")
def python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_venv(tmp_path_factory.mktemp("attack-venv"))

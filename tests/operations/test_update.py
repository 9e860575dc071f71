"""`hermes update` in a throwaway environment (a venv that sees this one's packages): a
plugin distribution installed with pip is upgraded from a local wheel folder, a constraints
file holds it back, and --dry-run changes nothing; this checkout is never touched."""

from __future__ import annotations

import base64
import hashlib
import json
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from .ops_home import environ, make_home

DIST = "hermes_ops_probe"


def wheel(folder: Path, version: str) -> Path:
    """A real wheel of a hermes plugin (entry point hermes_agent.plugins)."""
    info = f"{DIST}-{version}.dist-info"
    files = {
        f"{DIST}/__init__.py": f"VERSION = {version!r}\n\ndef register(ctx):\n    pass\n",
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: hermes-ops-probe\nVersion: {version}\n",
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
                         "Tag: py3-none-any\n",
        f"{info}/entry_points.txt": f"[hermes_agent.plugins]\nops-probe = {DIST}\n",
    }
    record = []
    for name, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=")
        record.append(f"{name},sha256={digest.decode()},{len(text.encode())}")
    record.append(f"{info}/RECORD,,")
    path = folder / f"{DIST}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
        archive.writestr(f"{info}/RECORD", "\n".join(record) + "\n")
    return path


@pytest.fixture
def env_with_plugin(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    wheel(wheels, "1.0")
    wheel(wheels, "2.0")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True,
                   timeout=120)
    python = venv / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path("
                           "'purelib'))"], capture_output=True, text=True, check=True).stdout
    # this environment's packages (hermes, pip) after the venv's own
    Path(site.strip(), "zz_outer.pth").write_text(
        f"import site; site.addsitedir({sysconfig.get_path('purelib')!r})\n")
    home = make_home(tmp_path)
    env = environ(home, PIP_NO_INDEX="1", PIP_FIND_LINKS=str(wheels),
                  PIP_DISABLE_PIP_VERSION_CHECK="1")
    subprocess.run([str(python), "-m", "pip", "install", "-q", "hermes-ops-probe==1.0"],
                   env=env, check=True, timeout=300, capture_output=True)
    return python, home, env


def installed(python: Path, env: dict[str, str]) -> str:
    return subprocess.run([str(python), "-c", "from importlib.metadata import version; "
                           "print(version('hermes-ops-probe'))"], env=env, capture_output=True,
                          text=True, check=True).stdout.strip()


def update(python: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(python), "-m", "hermes_agent.cli.root", "update", *args],
                          env=env, capture_output=True, text=True, timeout=300)


def test_update_upgrades_a_pip_plugin_within_the_constraints(
        env_with_plugin: tuple[Path, Path, dict[str, str]], tmp_path: Path) -> None:
    python, home, env = env_with_plugin
    dry = update(python, env, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert f"would run: {python} -m pip install --upgrade hermes-ops-probe" in dry.stdout
    assert "hermes-agent-runtime is installed from a checkout" in dry.stdout
    assert "hermes ships no lock file" in dry.stdout
    assert installed(python, env) == "1.0"

    (home / "constraints.txt").write_text("hermes-ops-probe<2\n")
    held = update(python, env)
    assert held.returncode == 0, held.stdout + held.stderr
    assert f"-c {home / 'constraints.txt'}" in held.stdout and "updated: hermes" in held.stdout
    assert installed(python, env) == "1.0"

    (home / "constraints.txt").unlink()
    done = update(python, env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert installed(python, env) == "2.0"


def test_locked_plugins_go_through_plugins_update(
        env_with_plugin: tuple[Path, Path, dict[str, str]]) -> None:
    python, home, env = env_with_plugin
    (home / "plugins.lock").write_text(json.dumps({"version": 1, "plugins": {"ops-probe": {
        "source": "pip", "spec": "hermes-ops-probe", "dist": "hermes-ops-probe",
        "version": "1.0"}}}))
    dry = update(python, env, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "pip install --upgrade" not in dry.stdout  # not upgraded behind the lock's back
    assert "would run: " in dry.stdout and "plugins update --all" in dry.stdout

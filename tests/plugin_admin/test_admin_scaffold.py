"""`hermes plugins new`: every kind generates a project whose own tests pass as generated and
which `hermes plugins validate` accepts. (The pip-installed round trip is in test_admin_pip.)"""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import yaml

from hermes_agent.cli.root import main

KINDS = ("tool", "hook", "memory", "model-provider", "web", "platform")


def test_every_kind_passes_its_own_tests(home, tmp_path, capsys):
    projects = []
    for kind in KINDS:
        assert main(["plugins", "new", f"demo-{kind}", "--kind", kind, "--dir", str(tmp_path)]) == 0
        projects.append(tmp_path / f"hermes-plugin-demo-{kind}")
    for project in projects:
        name = project.name.removeprefix("hermes-plugin-")
        meta = tomllib.loads((project / "pyproject.toml").read_text())
        package = f"hermes_{name.replace('-', '_')}"
        assert meta["project"]["entry-points"]["hermes_agent.plugins"] == {name: package}
        manifest = yaml.safe_load((project / "src" / package / "plugin.yaml").read_text())
        assert manifest["name"] == name
        for rel in ("README.md", "tests/test_plugin.py", f"src/{package}/schemas.py",
                    f"src/{package}/handlers.py", f"src/{package}/__init__.py"):
            assert (project / rel).is_file(), rel
        assert main(["plugins", "validate", str(project)]) == 0, capsys.readouterr().out
    capsys.readouterr()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(str(p / "src") for p in projects)}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "--import-mode=importlib", *(str(p / "tests") for p in projects)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and "13 passed" in proc.stdout, proc.stdout + proc.stderr


def test_bad_names_and_existing_folders_are_refused(home, tmp_path, capsys):
    assert main(["plugins", "new", "Bad Name", "--dir", str(tmp_path)]) == 1
    assert "not a usable plugin name" in capsys.readouterr().err
    assert main(["plugins", "new", "ok", "--dir", str(tmp_path)]) == 0
    assert main(["plugins", "new", "ok", "--dir", str(tmp_path)]) == 1
    assert "already exists" in capsys.readouterr().err
    assert sorted(p.name for p in Path(tmp_path).iterdir()) == ["hermes-home", "hermes-plugin-ok"]

"""Helpers for tests that build distributions and drive a throw-away virtualenv.

The virtualenv holds only what a test installs into it; this project (and its
dependencies, pip and setuptools) come from the development environment through a .pth
file, so creating one takes well under a second and needs no network.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any


def clean_env(**extra: str) -> dict[str, str]:
    """The environment without HERMES_/PIP_/PYTHON* settings, and pip kept offline."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("HERMES_", "PIP_", "PYTHON", "VIRTUAL_ENV", "EP_"))}
    env.update({"PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INDEX": "1", "PIP_NO_INPUT": "1",
                "PYTHONDONTWRITEBYTECODE": "1"})
    env.update(extra)
    return env


def run(cmd: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, **kwargs)
    assert proc.returncode == 0, f"{cmd} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    return proc


def make_venv(root: Path) -> Path:
    """A virtualenv at ``root/venv`` that sees this project via a .pth; returns its python."""
    run([sys.executable, "-m", "venv", "--without-pip", str(root / "venv")], env=clean_env())
    python = root / "venv" / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    purelib = Path(run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                       env=clean_env()).stdout.strip())
    dev = sysconfig.get_paths()["purelib"]
    # addsitedir also runs the dev site-packages' own .pth files (the editable-install finder).
    (purelib / "zz_hermes_dev.pth").write_text(f"import site; site.addsitedir({dev!r})\n",
                                               encoding="utf-8")
    return python


def pip_install(python: Path, *specs: str | Path) -> None:
    run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps",
         "--no-build-isolation", "--no-index", "-q", *(str(s) for s in specs)], env=clean_env())


def plugin_pyproject(dist: str, version: str, group: str, entry: str, value: str, package: str,
                     package_data: list[str], deps: list[str] | None = None,
                     description: str = "") -> str:
    """pyproject.toml of a tiny setuptools plugin distribution with one entry point."""
    import json
    import textwrap

    text = textwrap.dedent(f"""\
        [build-system]
        requires = ["setuptools>=61"]
        build-backend = "setuptools.build_meta"

        [project]
        name = "{dist}"
        version = "{version}"
        description = "{description}"
        requires-python = ">=3.8"
        dependencies = {json.dumps(deps or [])}

        [project.entry-points."{group}"]
        {entry} = "{value}"

        [tool.setuptools]
        packages = ["{package}"]
        """)
    if package_data:
        text += f"\n[tool.setuptools.package-data]\n{package} = {json.dumps(package_data)}\n"
    return text

"""Helpers shared by the plugin-admin attack tests: plugin folders, snapshots of what must
not change, and `hermes` run by a throw-away virtualenv's interpreter (so a pip command that a
guard failed to stop changes that virtualenv only)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from venvkit import clean_env

INIT = "def register(ctx):\n    pass\n"
SECRET = "TOPSECRET-key-material"  # in the fake ~/.ssh key: never in any output


def plugin_folder(root: Path, manifest: str = "name: demo\nversion: 1.0.0\n") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "plugin.yaml").write_text(manifest)
    (root / "__init__.py").write_text(INIT)
    return root


def package_folder(root: Path, marker: Path, with_manifest: bool, version: str = "1.0") -> Path:
    """A package folder (setup.py, pyproject.toml) of the plugin ``own`` (distribution
    hermes-own), whose setup.py writes ``marker`` when it runs; ``with_manifest`` puts a
    plugin.yaml and __init__.py at its top too."""
    plugin_folder(root / "own_pkg", f"name: own\nversion: {version}\n")
    (root / "setup.py").write_text(
        f"open({str(marker)!r}, 'w').write('ran')\nfrom setuptools import setup\n"
        f"setup(name='hermes-own', version={version!r}, packages=['own_pkg'], "
        "package_data={'own_pkg': ['plugin.yaml']}, "
        "entry_points={'hermes_agent.plugins': ['own = own_pkg']})\n")
    (root / "pyproject.toml").write_text('[build-system]\nrequires = ["setuptools"]\n'
                                         'build-backend = "setuptools.build_meta"\n')
    if with_manifest:
        plugin_folder(root, "name: own\n")
    return root


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and not p.is_symlink()}


def hermes(python: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    scratch = home.parent / "tmp"  # hermes's scratch folders: what escapes them stays in tmp_path
    scratch.mkdir(exist_ok=True)
    env = clean_env(HERMES_HOME=str(home), HOME=str(home.parent / "userhome"),
                    GIT_CONFIG_NOSYSTEM="1", TMPDIR=str(scratch))
    return subprocess.run([str(python), "-m", "hermes_agent.cli.root", *args],
                          env=env, cwd=home, capture_output=True, text=True, timeout=300)

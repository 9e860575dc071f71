"""The built wheel: one import package (``hermes_agent``) holding every mapped folder.

The wheel is built once per module, offline, from a copy of the working tree (tracked plus
untracked-but-not-ignored files), so the repository gets no build/ or *.egg-info.
"""

from __future__ import annotations

import configparser
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path, PurePosixPath

import pytest

REPO = Path(__file__).resolve().parents[1]
# repo folder -> package path inside the wheel (pyproject.toml [tool.setuptools.package-dir])
MAPPED = {"kernel": "hermes_agent", "hookspecs": "hermes_agent/hookspecs", "api": "hermes_agent/api",
          "kits": "hermes_agent/kits", "cli": "hermes_agent/cli",
          "builtin_plugins": "hermes_agent/builtin_plugins", "plugins": "hermes_agent/plugins"}
# A bundled plugin added to the copy only: bundled plugins are data (code included) and
# must ship whole, even while the repository has none yet.
PROBE = {"plugins/memory/zz-packaging-probe/plugin.yaml": "name: zz-packaging-probe\nkind: exclusive\n",
         "plugins/memory/zz-packaging-probe/__init__.py": "def register(ctx):\n    pass\n",
         "plugins/memory/zz-packaging-probe/helpers/util.py": "VALUE = 1\n",
         "plugins/memory/zz-packaging-probe/assets/data.json": "{}\n"}


def _quiet_env() -> dict[str, str]:
    return {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INPUT": "1",
            "PIP_NO_INDEX": "1", "PYTHONDONTWRITEBYTECODE": "1"}


def repo_files() -> list[str]:
    """Tracked and untracked-not-ignored files of the working tree (that still exist)."""
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("needs git and a git checkout")
    out = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=REPO,
                         check=True, capture_output=True).stdout.decode()
    return sorted({f for f in out.split("\0") if f and (REPO / f).is_file()})


def copy_tree(files: list[str], target: Path) -> None:
    for rel in files:
        dest = target / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / rel, dest)


def build_wheel(source: Path, out: Path) -> Path:
    for module in ("setuptools", "wheel"):
        if subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True).returncode:
            pytest.skip(f"{module} is not installed in {sys.executable}")
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                           "--no-index", "-q", "-w", str(out), str(source)],
                          capture_output=True, text=True, env=_quiet_env(), timeout=300)
    assert proc.returncode == 0, f"wheel build failed:\n{proc.stdout}\n{proc.stderr}"
    wheels = list(out.glob("*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


@pytest.fixture(scope="module")
def files() -> list[str]:
    return repo_files()


@pytest.fixture(scope="module")
def wheel(files: list[str], tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("packaging")
    source = root / "src"
    copy_tree(files, source)
    for rel, text in PROBE.items():
        (source / rel).parent.mkdir(parents=True, exist_ok=True)
        (source / rel).write_text(text, encoding="utf-8")
    return build_wheel(source, root / "dist")


@pytest.fixture(scope="module")
def names(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as archive:
        return archive.namelist()


@pytest.fixture(scope="module")
def dist_info(wheel: Path, names: list[str]) -> dict[str, str]:
    """The wheel's .dist-info files by base name (METADATA, entry_points.txt, ...)."""
    found = {}
    with zipfile.ZipFile(wheel) as archive:
        for name in names:
            parts = PurePosixPath(name).parts
            if len(parts) == 2 and parts[0].endswith(".dist-info"):
                found[parts[1]] = archive.read(name).decode("utf-8")
    return found


def mapped(rel: str) -> str:
    top, _, rest = rel.partition("/")
    return f"{MAPPED[top]}/{rest}"


def test_only_one_top_level_package(names: list[str]) -> None:
    tops = {PurePosixPath(n).parts[0] for n in names}
    dist_infos = {t for t in tops if t.endswith(".dist-info")}
    assert len(dist_infos) == 1, dist_infos
    assert tops - dist_infos == {"hermes_agent"}


def test_no_bytecode_or_caches(names: list[str]) -> None:
    assert not [n for n in names if "__pycache__" in n or n.endswith((".pyc", ".pyo"))]


def test_every_plugin_manifest_ships_at_its_mapped_path(files: list[str], names: list[str]) -> None:
    manifests = [f for f in files if f.split("/")[0] in ("builtin_plugins", "plugins")
                 and PurePosixPath(f).name in ("plugin.yaml", "plugin.yml")]
    assert "builtin_plugins/plugin_admin/plugin.yaml" in manifests
    missing = [mapped(f) for f in manifests if mapped(f) not in names]
    assert not missing, f"plugin manifests missing from the wheel: {missing}"


def test_bundled_plugins_ship_whole(files: list[str], names: list[str]) -> None:
    """Everything under plugins/ (data loaded by path: manifests, code, sub-folders, assets)."""
    bundled = [f for f in files if f.startswith("plugins/")] + list(PROBE)
    missing = [mapped(f) for f in bundled if mapped(f) not in names]
    assert not missing, f"bundled plugin files missing from the wheel: {missing}"


def test_bundled_skills_ship_with_their_reference_files(files: list[str], names: list[str]) -> None:
    skills = [f for f in files if f.startswith("builtin_plugins/skills/bundled/")]
    assert "builtin_plugins/skills/bundled/writing-hermes-plugins/references/plugin-yaml.md" in skills
    missing = [mapped(f) for f in skills if mapped(f) not in names]
    assert not missing, f"bundled skill files missing from the wheel: {missing}"


def test_py_typed(names: list[str]) -> None:
    assert "hermes_agent/py.typed" in names


def test_the_prevalidated_table_ships(names: list[str]) -> None:
    """A new home reads it instead of validating the shipped plugin.yaml files."""
    assert "hermes_agent/prevalidated.json" in names


def test_every_package_and_module_ships(files: list[str], names: list[str]) -> None:
    roots = ("kernel", "hookspecs", "api", "kits", "builtin_plugins", "cli")
    packages = [str(PurePosixPath(f).parent) for f in files
                if f.split("/")[0] in roots and PurePosixPath(f).name == "__init__.py"]
    assert {"kernel", "hookspecs", "api", "kits", "builtin_plugins", "cli"} <= set(packages)
    missing = [mapped(f"{p}/__init__.py") for p in packages if mapped(f"{p}/__init__.py") not in names]
    assert not missing, f"packages missing from the wheel: {missing}"
    # Modules of those packages too (a .py in a folder without __init__.py would not ship).
    modules = [f for f in files if f.split("/")[0] in roots and f.endswith(".py")
               and str(PurePosixPath(f).parent) in packages]
    missing = [mapped(f) for f in modules if mapped(f) not in names]
    assert not missing, f"modules missing from the wheel: {missing}"
    orphans = [f for f in files if f.split("/")[0] in roots and f.endswith(".py")
               and str(PurePosixPath(f).parent) not in packages]
    assert not orphans, f"modules outside any package (add an __init__.py): {orphans}"


def test_entry_points(dist_info: dict[str, str], names: list[str]) -> None:
    parser = configparser.ConfigParser(delimiters=("=",))
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read_string(dist_info["entry_points.txt"])
    assert parser.get("console_scripts", "hermes").strip() == "hermes_agent.cli.root:main"
    assert "pytest11" in parser
    targets = [v.strip() for v in parser["pytest11"].values()]
    assert "hermes_agent.testing.pytest_plugin" in targets
    for target in ("hermes_agent.cli.root", *targets):
        assert target.replace(".", "/") + ".py" in names, target


def test_metadata(dist_info: dict[str, str]) -> None:
    namespace: dict[str, str] = {}
    exec((REPO / "kernel" / "_version.py").read_text(encoding="utf-8"), namespace)
    headers = [line.partition(": ") for line in dist_info["METADATA"].splitlines() if ": " in line]
    meta: dict[str, list[str]] = {}
    for key, _, value in headers:
        meta.setdefault(key, []).append(value)
    assert meta["Name"] == ["hermes-agent-runtime"]
    assert meta["Version"] == [namespace["__version__"]]
    requires = " ".join(meta.get("Requires-Dist", []))
    for dependency in ("pluggy", "pyyaml", "pydantic", "click"):
        assert dependency in requires.lower(), requires


def test_wheel_contents_run(wheel: Path, tmp_path: Path) -> None:
    """The unpacked wheel imports and runs (ahead of the editable install on sys.path)."""
    unpacked = tmp_path / "unpacked"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(unpacked)
    home = tmp_path / "home"
    code = ("import json, hermes_agent, hermes_agent.cli.root as cli, hermes_agent.discovery as d\n"
            "print(json.dumps({'file': hermes_agent.__file__, 'bundled': str(d.bundled_dir({})),"
            " 'builtin': str(d.builtin_dir())}))\n"
            "raise SystemExit(cli.main(['plugins', 'list', '--all', '--json']))\n")
    env = {**_quiet_env(), "PYTHONPATH": str(unpacked), "HERMES_HOME": str(home)}
    for var in ("HERMES_LOAD_PLUGINS", "HERMES_SAFE_MODE", "HERMES_BUNDLED_PLUGINS"):
        env.pop(var, None)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=120)
    assert proc.returncode == 0, proc.stderr
    first, _, rest = proc.stdout.partition("\n")
    where = json.loads(first)
    for key in ("file", "bundled", "builtin"):
        assert Path(where[key]).is_relative_to(unpacked), where
    rows = {row["name"]: row for row in json.loads(rest)}
    admin = rows["plugin-admin"]
    assert admin["source"] == "builtin"
    assert Path(admin["location"]).is_relative_to(unpacked)
    probe = rows["zz-packaging-probe"]
    assert probe["source"] == "bundled" and probe["kind"] == "exclusive", probe

"""pip-installed plugins end to end: wheels and an sdist built here, installed by
`hermes plugins install` into a throw-away virtualenv (its own interpreter runs pip), then
enabled, diagnosed, updated with a capability diff, rolled back and removed. Also the
`hermes plugins new` scaffold, pip-installed and tested. Offline: pip reads a local
find-links folder only."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from adminkit import package_folder
from venvkit import clean_env, make_venv, pip_install, plugin_pyproject, run

WX_INIT = """\
import json


def _now(args, **kwargs):
    return json.dumps({"temp": 21})


def register(ctx):
    ctx.register_tool("wx_now", "wx", {"name": "wx_now", "description": "Weather now.",
                      "parameters": {"type": "object", "properties": {}}}, _now)
"""
# distribution -> version -> (files, dependencies)
DISTS: dict[str, dict[str, tuple[dict[str, str], list[str]]]] = {
    "hermes-wx": {
        "1.0.0": ({"wx_pkg/__init__.py": WX_INIT,
                   "wx_pkg/plugin.yaml": "name: wx\nversion: 1.0.0\nprovides_tools: [wx_now]\n"}, []),
        "2.0.0": ({"wx_pkg/__init__.py": WX_INIT + "    ctx.register_hook('post_tool_call', "
                   "lambda **kw: None)\n",
                   "wx_pkg/plugin.yaml": "name: wx\nversion: 2.0.0\nprovides_tools: [wx_now]\n"
                   "provides_hooks: [post_tool_call]\n"}, []),
    },
    "hermes-needy": {"0.1.0": ({"needy_pkg/__init__.py": "def register(ctx):\n    pass\n",
                                "needy_pkg/plugin.yaml": "name: needy\n"},
                               ["no-such-dependency-anywhere>=1"])},
    "hermes-sd": {"0.3.0": ({"sd_pkg/__init__.py": "def register(ctx):\n    pass\n",
                             "sd_pkg/plugin.yaml": "name: sd\nversion: 0.3.0\n"}, [])},
}


def pyproject(dist: str, version: str, package: str, deps: list[str]) -> str:
    return plugin_pyproject(dist, version, "hermes_agent.plugins", package.removesuffix("_pkg"),
                            package, package, ["plugin.yaml"], deps)


@pytest.fixture(scope="module")
def links(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Wheels of every distribution above, plus an sdist of hermes-sd, in one folder."""
    root = tmp_path_factory.mktemp("pip-dists")
    out = root / "links"
    batches: list[list[Path]] = [[], []]  # pip builds one version of a distribution per run
    for dist, versions in DISTS.items():
        for index, (version, (files, deps)) in enumerate(versions.items()):
            src = root / "src" / f"{dist}-{version}"
            for rel, text in files.items():
                (src / rel).parent.mkdir(parents=True, exist_ok=True)
                (src / rel).write_text(text)
            package = next(iter(files)).split("/")[0]
            (src / "pyproject.toml").write_text(pyproject(dist, version, package, deps))
            batches[index].append(src)
    for batch in batches:
        run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
             "--no-index", "-q", "-w", str(out), *map(str, batch)], env=clean_env())
    sd = root / "src" / "hermes-sd-0.3.0"
    run([sys.executable, "-c", "import sys, setuptools.build_meta as b; b.build_sdist(sys.argv[1])",
         str(root / "sdist")], env=clean_env(), cwd=sd)
    for wheel in out.glob("hermes_sd-*.whl"):
        wheel.unlink()  # hermes-sd is installed from its sdist only
    return out


@pytest.fixture(scope="module")
def python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_venv(tmp_path_factory.mktemp("admin-venv"))


class Hermes:
    """`hermes` of the virtualenv, with its own HERMES_HOME; pip reads ``links`` only."""

    def __init__(self, python: Path, home: Path, links: Path):
        self.python, self.home = python, home
        home.mkdir()
        # PIP_NO_BUILD_ISOLATION=0 lets pip build the sdist offline with the setuptools it has.
        self.env = clean_env(HERMES_HOME=str(home), PIP_FIND_LINKS=str(links),
                             PIP_NO_BUILD_ISOLATION="0")

    def __call__(self, *args: str, input: str = "", ok: bool = True) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run([str(self.python), "-m", "hermes_agent.cli.root", *args], input=input,
                              env=self.env, cwd=self.home, capture_output=True, text=True, timeout=300)
        if ok:
            assert proc.returncode == 0, f"hermes {' '.join(args)}:\n{proc.stdout}\n{proc.stderr}"
        return proc

    def rows(self, *extra: str) -> dict[str, dict[str, Any]]:
        return {r["name"]: r for r in json.loads(self("plugins", "list", "--json", *extra).stdout)}

    def lock(self) -> dict[str, Any]:
        path = self.home / "plugins.lock"
        return json.loads(path.read_text())["plugins"] if path.exists() else {}

    def config(self) -> dict[str, Any]:
        path = self.home / "config.yaml"
        return (yaml.safe_load(path.read_text()) or {}) if path.exists() else {}

    def installed(self, dist: str) -> str:
        code = (f"from importlib.metadata import version, PackageNotFoundError\ntry: print(version("
                f"{dist!r}))\nexcept PackageNotFoundError: print('-')")
        return run([str(self.python), "-c", code], env=self.env).stdout.strip()


@pytest.fixture
def hermes(python: Path, links: Path, tmp_path: Path) -> Hermes:
    return Hermes(python, tmp_path / "home", links)


def test_wheel_install_enable_doctor_update_rollback_remove(hermes: Hermes, links: Path):
    v1, v2 = links / "hermes_wx-1.0.0-py3-none-any.whl", links / "hermes_wx-2.0.0-py3-none-any.whl"
    proc = hermes("plugins", "install", str(v1), input="y\n")
    assert "pip distribution hermes-wx 1.0.0" in proc.stdout and "tools:    wx_now" in proc.stdout
    assert "Enable wx now? [y/N]" in proc.stdout
    # the slow steps say what they wait for, on stderr (stdout stays the command's own)
    assert f"Fetching {v1} with pip…" in proc.stderr
    assert "Installing hermes-wx 1.0.0 with pip…" in proc.stderr
    assert "with pip…" not in proc.stdout
    assert hermes.installed("hermes-wx") == "1.0.0"
    entry = hermes.lock()["wx"]
    assert (entry["source"], entry["dist"], entry["dist_version"], entry["spec"]) == \
        ("pip", "hermes-wx", "1.0.0", str(v1))
    assert hermes.config() == {"plugins": {"enabled": ["wx"]}}
    row = hermes.rows("--load")["wx"]
    assert (row["source"], row["state"], row["tools"], row["hooks"]) == \
        ("entrypoint", "loaded", ["wx_now"], [])
    doctor = json.loads(hermes("plugins", "doctor", "wx", "--json").stdout)["plugins"][0]
    assert (doctor["active"], doctor["tools"], doctor["hooks"]) == (True, 1, 0)

    proc = hermes("plugins", "update", "wx", "--from", str(v2), input="n\n", ok=False)
    assert proc.returncode == 1 and "+ new hooks: post_tool_call" in proc.stdout
    assert "Accept it? [y/N]" in proc.stdout and hermes.installed("hermes-wx") == "1.0.0"
    proc = hermes("plugins", "update", "wx", "--from", str(v2), input="y\n")
    assert "Update wx: 1.0.0 -> 2.0.0" in proc.stdout
    assert hermes.installed("hermes-wx") == "2.0.0"
    assert [h["dist_version"] for h in hermes.lock()["wx"]["history"]] == ["1.0.0"]
    assert hermes.rows("--load")["wx"]["hooks"] == ["post_tool_call"]

    proc = hermes("plugins", "rollback", "wx")
    assert "Rolled wx back to 1.0.0" in proc.stdout and "- removed hooks: post_tool_call" in proc.stdout
    assert hermes.installed("hermes-wx") == "1.0.0"
    assert hermes.lock()["wx"]["dist_version"] == "1.0.0"
    assert hermes.rows("--load")["wx"]["hooks"] == []
    proc = hermes("plugins", "rollback", "wx", ok=False)  # not back to 2.0.0: nothing older
    assert proc.returncode == 1 and "nothing older to roll back to" in proc.stderr
    assert hermes.installed("hermes-wx") == "1.0.0"

    data = hermes.home / "plugin-data" / "wx"
    data.mkdir(parents=True)
    hermes("plugins", "remove", "wx", "--keep-data")
    assert hermes.installed("hermes-wx") == "-"
    assert hermes.lock() == {} and hermes.config() == {"plugins": {"enabled": []}}
    assert "wx" not in hermes.rows() and data.is_dir()


def test_requirement_spec_updates_to_newest_and_rolls_back_by_version(hermes: Hermes):
    hermes("plugins", "install", "hermes-wx==1.0.0", "--enable", "--no-input")
    assert hermes.installed("hermes-wx") == "1.0.0"
    proc = hermes("plugins", "update", "wx", "--dry-run")
    assert "1.0.0 -> 2.0.0" in proc.stdout and "Dry run" in proc.stdout
    assert hermes.installed("hermes-wx") == "1.0.0"
    proc = hermes("plugins", "update", "--all", "--no-input", ok=False)
    assert proc.returncode == 1 and "--yes" in proc.stderr
    hermes("plugins", "update", "wx", "--yes")
    assert hermes.installed("hermes-wx") == "2.0.0"
    hermes("plugins", "rollback", "wx")
    assert hermes.installed("hermes-wx") == "1.0.0"
    hermes("plugins", "remove", "wx")
    assert hermes.installed("hermes-wx") == "-"


def test_sdist_install_and_failed_pip_install_leaves_nothing(hermes: Hermes, links: Path):
    sdist = next((links.parent / "sdist").glob("hermes?sd-0.3.0.tar.gz"))
    # building runs the package's setup code before anything is shown: only when asked to
    for spec in (str(sdist), "hermes-sd"):
        proc = hermes("plugins", "install", spec, "--no-input", ok=False)
        assert proc.returncode == 1 and "--allow-build" in proc.stderr, proc.stderr
        assert hermes.installed("hermes-sd") == "-" and hermes.lock() == {}
    assert "is a source distribution" in hermes("plugins", "install", str(sdist), "--no-input",
                                                ok=False).stderr
    proc = hermes("plugins", "install", str(sdist), "--allow-build", "--no-input")
    assert "Installed sd 0.3.0 (source: pip)" in proc.stdout
    assert hermes.rows()["sd"]["source"] == "entrypoint"
    assert hermes.lock()["sd"]["spec"] == str(sdist)
    hermes("plugins", "remove", "sd")
    assert hermes.installed("hermes-sd") == "-"

    (hermes.home / "config.yaml").write_text("model:\n  default: m\n")
    proc = hermes("plugins", "install", "hermes-needy", "--enable", "--no-input", ok=False)
    assert proc.returncode == 1 and "pip install hermes-needy failed" in proc.stderr
    assert "no-such-dependency-anywhere" in proc.stderr
    assert hermes.installed("hermes-needy") == "-"
    assert hermes.lock() == {} and hermes.config() == {"model": {"default": "m"}}

    proc = hermes("plugins", "install", "hermes-does-not-exist", "--no-input", ok=False)
    assert proc.returncode == 1 and "pip could not fetch or build hermes-does-not-exist" in proc.stderr
    assert "only wheels were looked for" in proc.stderr


def test_a_package_folder_is_built_with_allow_build_only(hermes: Hermes, tmp_path: Path):
    """Building a folder runs its setup.py: install and update need --allow-build for it."""
    marker = tmp_path / "setup-code-ran"
    folder = package_folder(tmp_path / "own", marker, with_manifest=False)
    try:
        proc = hermes("plugins", "install", str(folder), "--no-input", ok=False)
        assert proc.returncode == 1 and "is a Python package folder" in proc.stderr
        assert "pass --allow-build" in proc.stderr and not marker.exists()
        assert hermes.installed("hermes-own") == "-" and hermes.lock() == {}
        proc = hermes("plugins", "install", str(folder), "--allow-build", "--no-input")
        assert "Installed own 1.0 (source: pip)" in proc.stdout and marker.exists()
        assert hermes.installed("hermes-own") == "1.0"
        assert (hermes.lock()["own"]["source"], hermes.lock()["own"]["spec"]) == ("pip", str(folder))

        marker.unlink()
        package_folder(folder, marker, with_manifest=False, version="1.1")
        proc = hermes("plugins", "update", "own", "--yes", ok=False)
        assert proc.returncode == 1 and "--allow-build" in proc.stderr and not marker.exists()
        assert hermes.installed("hermes-own") == "1.0"
        hermes("plugins", "update", "own", "--yes", "--allow-build")
        assert hermes.installed("hermes-own") == "1.1" and marker.exists()
        hermes("plugins", "remove", "own")
        assert hermes.installed("hermes-own") == "-"
    finally:
        run([sys.executable, "-m", "pip", "--python", str(hermes.python), "uninstall", "-y", "-q",
             "hermes-own"], env=clean_env())


def test_scaffold_passes_its_test_when_installed(hermes: Hermes, python: Path, tmp_path: Path):
    hermes("plugins", "new", "hello-world", "--kind", "tool", "--dir", str(tmp_path))
    project = tmp_path / "hermes-plugin-hello-world"
    pip_install(python, project)
    proc = subprocess.run([str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
                          cwd=project, env=hermes.env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and "2 passed" in proc.stdout, proc.stdout + proc.stderr
    row = hermes.rows()["hello-world"]
    assert (row["source"], row["version"], row["tools"]) == ("entrypoint", "0.1.0", ["hello_world_greet"])
    assert json.loads(hermes("plugins", "validate", str(project), "--json").stdout)["ok"] is True
    hermes("plugins", "enable", "hello-world")
    assert hermes.rows("--load")["hello-world"]["state"] == "loaded"
    run([sys.executable, "-m", "pip", "--python", str(python), "uninstall", "-y", "-q",
         "hermes-plugin-hello-world"], env=clean_env())


HOSTED_DISTS = {  # distribution -> (pyproject.toml, files); built into the find-links folder
    "hermes-hosted": (plugin_pyproject(
        "hermes-hosted", "1.0.0", "hermes_agent.plugins", "hosted", "hosted_pkg", "hosted_pkg",
        ["plugin.yaml"], ["hermes-agent>=0.15", "hosted-helper>=1",
                          'never-available-offline; extra == "test"']),
        {"hosted_pkg/__init__.py": "import hosted_helper\n\n\ndef register(ctx):\n    pass\n",
         "hosted_pkg/plugin.yaml": "name: hosted\nversion: 1.0.0\n"}),
    "hosted-helper": ('[build-system]\nrequires = ["setuptools>=61"]\nbuild-backend = '
                      '"setuptools.build_meta"\n[project]\nname = "hosted-helper"\nversion = "1.0.0"\n'
                      '[tool.setuptools]\npackages = ["hosted_helper"]\n',
                      {"hosted_helper/__init__.py": ""}),
    # A dependency that ships its own `hermes` console script.
    "fake-hermes-cli": ('[build-system]\nrequires = ["setuptools>=61"]\nbuild-backend = '
                        '"setuptools.build_meta"\n[project]\nname = "fake-hermes-cli"\n'
                        'version = "1.0.0"\n[project.scripts]\nhermes = "fake_cli:main"\n'
                        '[tool.setuptools]\npackages = ["fake_cli"]\n',
                        {"fake_cli/__init__.py": "def main():\n    print('not hermes')\n"}),
    "hermes-clobber": (plugin_pyproject(
        "hermes-clobber", "1.0.0", "hermes_agent.plugins", "clobber", "clobber_pkg", "clobber_pkg",
        ["plugin.yaml"], ["fake-hermes-cli"]),
        {"clobber_pkg/__init__.py": "def register(ctx):\n    pass\n",
         "clobber_pkg/plugin.yaml": "name: clobber\nversion: 1.0.0\n"}),
}


def build_wheels(dists: dict[str, tuple[str, dict[str, str]]], root: Path, out: Path) -> Path:
    """Write each distribution's pyproject.toml and files under ``root``; wheels go to ``out``."""
    for dist, (project, files) in dists.items():
        for rel, text in {"pyproject.toml": project, **files}.items():
            (root / dist / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / dist / rel).write_text(text)
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
         "-q", "-w", str(out), *(str(root / d) for d in dists)], env=clean_env())
    return out


@pytest.fixture(scope="module")
def hosted_links(links: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_wheels(HOSTED_DISTS, tmp_path_factory.mktemp("hosted-src"), links)


def test_plugin_depending_on_hermes_agent_is_installed_without_it(hermes: Hermes, hosted_links: Path):
    """hermes-agent is not in the (offline) find-links folder: trying to install it would fail."""
    wheel = hosted_links / "hermes_hosted-1.0.0-py3-none-any.whl"
    proc = hermes("plugins", "install", str(wheel), "--enable", "--no-input")
    assert "hermes-hosted 1.0.0 declares hermes-agent>=0.15 as a dependency" in proc.stdout
    assert "replace this `hermes` command" in proc.stdout and "--no-deps" in proc.stdout
    assert "installed separately: hosted-helper>=1" in proc.stdout
    assert "never-available-offline" not in proc.stdout  # an extra's requirement: not installed
    assert (hermes.installed("hermes-hosted"), hermes.installed("hosted-helper")) == ("1.0.0", "1.0.0")
    assert hermes.installed("hermes-agent") == "-"
    assert hermes.rows("--load")["hosted"]["state"] == "loaded"  # it imports hosted_helper
    hermes("plugins", "remove", "hosted")
    run([sys.executable, "-m", "pip", "--python", str(hermes.python), "uninstall", "-y", "-q",
         "hosted-helper"], env=clean_env())


def test_dependency_that_replaces_the_hermes_command_is_refused(hermes: Hermes, hosted_links: Path):
    wheel = hosted_links / "hermes_clobber-1.0.0-py3-none-any.whl"
    try:
        proc = hermes("plugins", "install", str(wheel), "--enable", "--no-input", ok=False)
        assert proc.returncode == 1
        assert "installing hermes-clobber 1.0.0 replaced the `hermes` command" in proc.stderr
        assert "fake-hermes-cli installs a `hermes` command running fake_cli:main" in proc.stderr
        assert "-m pip uninstall -y fake-hermes-cli" in proc.stderr
        assert "-m hermes_agent.cli.root` runs hermes" in proc.stderr
        assert hermes.installed("hermes-clobber") == "-"  # the install was undone
        assert hermes.lock() == {} and hermes.config() == {}
    finally:
        run([sys.executable, "-m", "pip", "--python", str(hermes.python), "uninstall", "-y", "-q",
             "fake-hermes-cli", "hermes-clobber"], env=clean_env())


def _library(dist: str, deps: list[str]) -> tuple[str, dict[str, str]]:
    package = dist.replace("-", "_")
    return (f'[build-system]\nrequires = ["setuptools>=61"]\nbuild-backend = "setuptools.build_meta"\n'
            f'[project]\nname = "{dist}"\nversion = "1.0.0"\ndependencies = {json.dumps(deps)}\n'
            f'[tool.setuptools]\npackages = ["{package}"]\n', {f"{package}/__init__.py": ""})


def _rm_plugin(short: str, deps: list[str]) -> tuple[str, dict[str, str]]:
    package = f"{short}_pkg"
    return (plugin_pyproject(f"hermes-{short}", "1.0.0", "hermes_agent.plugins", short, package,
                             package, ["plugin.yaml"], deps),
            {f"{package}/__init__.py": "def register(ctx):\n    pass\n",
             f"{package}/plugin.yaml": f"name: {short}\nversion: 1.0.0\n"})


REMOVAL_DISTS = {  # rmone needs rm-only-dep (which needs rm-deep-dep) and rm-shared-dep
    "hermes-rmone": _rm_plugin("rmone", ["rm-only-dep", "rm-shared-dep>=1"]),
    "hermes-rmtwo": _rm_plugin("rmtwo", ["rm-shared-dep"]),
    "rm-only-dep": _library("rm-only-dep", ["rm-deep-dep"]),
    "rm-deep-dep": _library("rm-deep-dep", []),
    "rm-shared-dep": _library("rm-shared-dep", []),
}


@pytest.fixture(scope="module")
def removal_links(links: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_wheels(REMOVAL_DISTS, tmp_path_factory.mktemp("removal-src"), links)


def test_remove_offers_the_dependencies_nothing_else_needs(hermes: Hermes, removal_links: Path):
    def install(short: str) -> None:
        hermes("plugins", "install", str(removal_links / f"hermes_{short}-1.0.0-py3-none-any.whl"),
               "--enable", "--no-input")

    deps = ("rm-only-dep", "rm-deep-dep", "rm-shared-dep")
    try:
        install("rmone")
        install("rmtwo")
        assert [hermes.installed(d) for d in deps] == ["1.0.0"] * 3
        proc = hermes("plugins", "remove", "rmone")  # no terminal, no flag: only listed
        assert "✓ Removed rmone (pip distribution hermes-rmone)" in proc.stdout
        assert "nothing else installed needs: rm-deep-dep, rm-only-dep\n" in proc.stdout
        assert "rm-shared-dep" not in proc.stdout
        assert "pip uninstall -y rm-deep-dep rm-only-dep`" in proc.stdout
        assert hermes.installed("hermes-rmone") == "-"
        assert [hermes.installed(d) for d in deps] == ["1.0.0"] * 3

        install("rmone")
        proc = hermes("plugins", "remove", "rmone", "--with-deps")
        assert "✓ Uninstalled dependencies nothing else needs: rm-deep-dep, rm-only-dep" in proc.stdout
        assert [hermes.installed(d) for d in deps] == ["-", "-", "1.0.0"]  # rmtwo needs it
        proc = hermes("plugins", "remove", "rmtwo", "--with-deps")
        assert "nothing else needs: rm-shared-dep" in proc.stdout
        assert hermes.installed("rm-shared-dep") == "-" and hermes.installed("hermes-rmtwo") == "-"
    finally:
        run([sys.executable, "-m", "pip", "--python", str(hermes.python), "uninstall", "-y", "-q",
             "hermes-rmone", "hermes-rmtwo", *deps], env=clean_env())

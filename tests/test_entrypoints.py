"""pip-installed plugins: the ``hermes_agent.plugins`` and ``hermes_agent.memory_providers``
entry-point groups, end to end.

Tiny plugin distributions are written and built here (wheels, plus one sdist), installed into
ONE throw-away virtualenv that sees this project (and its dependencies) through a .pth file,
and driven through the real CLI and ``Kernel`` in subprocesses of that virtualenv. Every
plugin module writes a marker file when it is imported, so the tests can prove what listing
does not import. Everything is offline (no index).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml
from venvkit import clean_env, make_venv, pip_install, plugin_pyproject, run

GROUP = "hermes_agent.plugins"
MEMORY_GROUP = "hermes_agent.memory_providers"
REGULAR = ("epmod", "epfunc", "epobj", "epsdist")  # load fine once enabled
BROKEN = "epbad"  # raises on import
MEMORY = "epmem"  # memory provider, loads when selected
TOOLS = {"epmod": "epmod_echo", "epfunc": "epfunc_echo", "epobj": "epobj_echo",
         "epsdist": "epsdist_echo"}

MARKER = """\
import os as _os
from pathlib import Path as _Path

if _os.environ.get("EP_MARKER_DIR"):
    (_Path(_os.environ["EP_MARKER_DIR"]) / "{name}.imported").write_text(__name__)
"""


def _module(name: str, body: str = "") -> str:
    """Source of a plugin package ``__init__``: marker, an echo handler and its schema, ``body``."""
    return MARKER.format(name=name) + textwrap.dedent(f"""
        import json as _json


        def _echo(args, **kwargs):
            return _json.dumps({{"plugin": "{name}", "echo": args.get("text", "")}})


        SCHEMA = {{"name": "{name}_echo", "description": "Echo text back ({name}).",
                  "parameters": {{"type": "object", "properties": {{"text": {{"type": "string"}}}},
                                 "required": ["text"]}}}}
        """) + textwrap.dedent(body)


# name -> (distribution, version, group, entry-point value, {relative path: source}, package data)
PLUGINS: dict[str, tuple[str, str, str, str, dict[str, str], list[str]]] = {
    # (a) module target, with a plugin.yaml shipped inside the package
    "epmod": ("hermes-epmod", "1.0.0", GROUP, "epmod_pkg", {
        "epmod_pkg/__init__.py": _module("epmod", """
            def register(ctx):
                ctx.register_tool("epmod_echo", "epmod", SCHEMA, _echo)
            """),
        "epmod_pkg/plugin.yaml": textwrap.dedent("""\
            name: epmod
            version: 1.2.3
            description: Echo tool from a module entry point.
            author: Entry Point Tests
            provides_tools: [epmod_echo]
            """),
    }, ["plugin.yaml"]),
    # (b) function target: called with ctx; the module's own register() must not be used
    "epfunc": ("hermes-epfunc", "0.3.0", GROUP, "epfunc_pkg:setup_plugin", {
        "epfunc_pkg/__init__.py": _module("epfunc", """
            def setup_plugin(ctx):
                ctx.register_tool("epfunc_echo", "epfunc", SCHEMA, _echo)


            def register(ctx):
                raise AssertionError("the entry point names setup_plugin")
            """),
    }, []),
    # (c) object target: its .register(ctx) method is called
    "epobj": ("hermes-epobj", "0.4.0", GROUP, "epobj_pkg:PLUGIN", {
        "epobj_pkg/__init__.py": _module("epobj", """
            class _Plugin:
                tool = "epobj_echo"

                def register(self, ctx):
                    ctx.register_tool(self.tool, "epobj", SCHEMA, _echo)


            PLUGIN = _Plugin()


            def register(ctx):
                raise AssertionError("the entry point names PLUGIN")
            """),
    }, []),
    # (d) installed from an sdist (built below), plugin.yaml as package data
    "epsdist": ("hermes-epsdist", "2.0.0", GROUP, "epsdist_pkg", {
        "epsdist_pkg/__init__.py": _module("epsdist", """
            def register(ctx):
                ctx.register_tool("epsdist_echo", "epsdist", SCHEMA, _echo)
            """),
        "epsdist_pkg/plugin.yaml": "name: epsdist\nversion: 2.0.0\nprovides_tools: [epsdist_echo]\n",
    }, ["plugin.yaml"]),
    # a module that raises on import
    "epbad": ("hermes-epbad", "0.0.1", GROUP, "epbad_pkg", {
        "epbad_pkg/__init__.py": MARKER.format(name="epbad")
        + "\nraise RuntimeError('epbad exploded on import')\n",
    }, []),
    # a memory provider class in the memory_providers group
    "epmem": ("hermes-epmem", "0.5.0", MEMORY_GROUP, "epmem_pkg:EpMemProvider", {
        "epmem_pkg/__init__.py": MARKER.format(name="epmem") + textwrap.dedent("""
            class EpMemProvider:
                name = "epmem"

                def __init__(self):
                    self.items = []

                def is_available(self):
                    return True

                def remember(self, text):
                    self.items.append(text)
                    return len(self.items)
            """),
    }, []),
}
SDIST = "epsdist"


def _pyproject(name: str) -> str:
    dist, version, group, value, files, data = PLUGINS[name]
    package = next(iter(files)).split("/")[0]
    return plugin_pyproject(dist, version, group, name, value, package, data,
                            description=f"hermes entry-point test plugin {name}")


_clean_env, _run = clean_env, run


@pytest.fixture(scope="module")
def dists(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Five wheels (one pip run) and one sdist."""
    for module in ("setuptools", "wheel"):
        if subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True).returncode:
            pytest.skip(f"{module} is not installed in {sys.executable}")
    root = tmp_path_factory.mktemp("ep-dists")
    sources = {}
    for name, (_, _, _, _, files, _) in PLUGINS.items():
        source = root / "src" / name
        for rel, text in files.items():
            (source / rel).parent.mkdir(parents=True, exist_ok=True)
            (source / rel).write_text(text, encoding="utf-8")
        (source / "pyproject.toml").write_text(_pyproject(name), encoding="utf-8")
        sources[name] = source
    out = root / "dist"
    env = _clean_env()
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
          "-q", "-w", str(out), *(str(s) for n, s in sources.items() if n != SDIST)], env=env)
    if subprocess.run([sys.executable, "-c", "import build"], capture_output=True).returncode == 0:
        _run([sys.executable, "-m", "build", "--sdist", "--no-isolation", "--outdir", str(out),
              str(sources[SDIST])], env=env)
    else:  # the same sdist through the backend's PEP 517 hook
        _run([sys.executable, "-c", "import sys, setuptools.build_meta as b; "
              "b.build_sdist(sys.argv[1])", str(out)], env=env, cwd=sources[SDIST])
    wheels, sdists = sorted(out.glob("*.whl")), sorted(out.glob("*.tar.gz"))
    assert len(wheels) == len(PLUGINS) - 1 and len(sdists) == 1, (wheels, sdists)
    return [*wheels, *sdists]


@pytest.fixture(scope="module")
def venv(dists: list[Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A virtualenv holding only the plugin distributions; this project comes in via a .pth."""
    python = make_venv(tmp_path_factory.mktemp("ep-venv"))
    pip_install(python, *dists)
    return python


class Env:
    """One HERMES_HOME and marker folder, driving the venv's hermes."""

    def __init__(self, python: Path, root: Path):
        self.python = python
        self.home = root / "hermes-home"
        self.markers = root / "markers"
        self.home.mkdir()
        self.markers.mkdir()
        self.env = _clean_env(HERMES_HOME=str(self.home), EP_MARKER_DIR=str(self.markers))

    def run(self, *args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run([str(self.python), "-m", "hermes_agent.cli.root", *args], env=self.env,
                              cwd=self.home, capture_output=True, text=True, timeout=120)
        if ok:
            assert proc.returncode == 0, f"hermes {' '.join(args)}:\n{proc.stdout}\n{proc.stderr}"
        return proc

    def rows(self, *extra: str) -> dict[str, dict[str, Any]]:
        rows = json.loads(self.run("plugins", "list", "--json", *extra).stdout)
        return {row["name"]: row for row in rows}

    def python_json(self, code: str) -> Any:
        proc = subprocess.run([str(self.python), "-c", textwrap.dedent(code)], env=self.env,
                              cwd=self.home, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, f"{code}\n{proc.stdout}\n{proc.stderr}"
        return json.loads(proc.stdout.strip().splitlines()[-1])

    def imported(self) -> set[str]:
        return {p.name.removesuffix(".imported") for p in self.markers.glob("*.imported")}

    def clear_markers(self) -> None:
        for marker in self.markers.glob("*.imported"):
            marker.unlink()

    def config(self) -> dict[str, Any]:
        return yaml.safe_load((self.home / "config.yaml").read_text(encoding="utf-8")) or {}


@pytest.fixture
def hermes(venv: Path, tmp_path: Path) -> Env:
    return Env(venv, tmp_path)


def test_installed_into_the_venv_only(hermes: Env) -> None:
    found = hermes.python_json("""
        import json, hermes_agent
        from importlib.metadata import entry_points
        print(json.dumps({"groups": {g: sorted(e.name for e in entry_points(group=g))
                                     for g in ("hermes_agent.plugins", "hermes_agent.memory_providers")},
                          "kernel": hermes_agent.__file__}))
        """)
    assert found["groups"] == {GROUP: sorted(n for n in PLUGINS if n != MEMORY), MEMORY_GROUP: [MEMORY]}
    assert found["kernel"]  # hermes_agent itself comes from the dev environment
    assert hermes.imported() == set()
    # The dev environment running this suite is not touched.
    from importlib.metadata import entry_points

    assert not {e.name for e in entry_points(group=GROUP)} & set(PLUGINS)


def test_listing_discovers_every_entry_point_without_importing(hermes: Env) -> None:
    rows = hermes.rows()
    for name in (*REGULAR, BROKEN):
        row = rows[name]
        assert row["source"] == "entrypoint", row
        assert row["state"] == "not enabled", row
        assert f"hermes plugins enable {name}" in row["reason"]
        dist, version, group, value = PLUGINS[name][:4]
        assert row["location"] == f"entry point {name} = {value} ({dist} {version})"
    # A plugin.yaml inside the package is read (from the wheel and from the sdist install).
    assert rows["epmod"]["version"] == "1.2.3"
    assert rows["epmod"]["description"] == "Echo tool from a module entry point."
    assert rows["epmod"]["tools"] == ["epmod_echo"]
    assert rows["epsdist"]["version"] == "2.0.0" and rows["epsdist"]["tools"] == ["epsdist_echo"]
    # Without one, the manifest comes from the distribution's metadata.
    assert rows["epfunc"]["version"] == "0.3.0"
    assert rows["epfunc"]["description"] == "hermes entry-point test plugin epfunc"
    mem = rows[MEMORY]
    assert (mem["source"], mem["kind"], mem["state"]) == ("entrypoint", "exclusive", "not selected")
    assert "memory.provider" in mem["reason"]
    # Nothing was imported: not by the JSON listing, the table, --all, or info.
    hermes.run("plugins", "list")
    hermes.run("plugins", "list", "--all")
    info = json.loads(hermes.run("plugins", "info", "epmod", "--json").stdout)
    assert info["declared_tools"] == ["epmod_echo"] and info["author"] == "Entry Point Tests"
    assert hermes.imported() == set()


def test_enable_load_and_report(hermes: Env) -> None:
    for name in (*REGULAR, BROKEN):
        out = hermes.run("plugins", "enable", name).stdout
        assert f"Plugin {name} enabled" in out
    assert hermes.config()["plugins"]["enabled"] == [*REGULAR, BROKEN]

    # Enabled but not loaded yet: listing still imports nothing.
    rows = hermes.rows()
    for name in (*REGULAR, BROKEN):
        assert rows[name]["state"] == "enabled", rows[name]
    assert hermes.imported() == set()

    rows = hermes.rows("--load")
    for name in REGULAR:
        row = rows[name]
        assert row["state"] == "loaded", row
        assert row["tools"] == [TOOLS[name]], row
    assert not [w for w in rows["epmod"]["warnings"] if "declare" in w], rows["epmod"]["warnings"]
    bad = rows[BROKEN]
    assert bad["state"] == "failed", bad
    assert "RuntimeError: epbad exploded on import" in bad["reason"], bad
    assert "entry point epbad = epbad_pkg" in bad["reason"], bad
    assert rows[MEMORY]["state"] == "not selected"
    assert hermes.imported() == {*REGULAR, BROKEN}

    # Listing again reports that load (the ledger) without importing anything.
    hermes.clear_markers()
    rows = hermes.rows()
    for name in REGULAR:
        assert (rows[name]["state"], rows[name]["tools"], rows[name]["counts"]) == \
            ("loaded", [TOOLS[name]], "registered"), rows[name]
    assert rows[BROKEN]["state"] == "failed"
    assert "epbad exploded on import" in rows[BROKEN]["reason"]
    assert hermes.imported() == set()

    # Disabling wins over the ledger.
    hermes.run("plugins", "disable", "epobj")
    assert hermes.rows()["epobj"]["state"] == "disabled"
    assert hermes.imported() == set()


def test_tools_dispatch_through_the_registry(hermes: Env) -> None:
    (hermes.home / "config.yaml").write_text(yaml.safe_dump(
        {"plugins": {"enabled": [*REGULAR, BROKEN]}}), encoding="utf-8")
    result = hermes.python_json("""
        import json
        from hermes_agent import Kernel
        k = Kernel().boot()
        print(json.dumps({
            "results": {t: json.loads(k.tools.dispatch(t, {"text": "hi"}))
                        for t in ("epmod_echo", "epfunc_echo", "epobj_echo", "epsdist_echo")},
            "states": {n: s.state for n, s in k.plugins.items()},
            "owners": {n: s.plugin for n, s in k.tools.tools.items()},
        }))
        """)
    for name, tool in TOOLS.items():
        assert result["results"][tool] == {"plugin": name, "echo": "hi"}
        assert result["owners"][tool] == name
        assert result["states"][name] == "loaded"
    assert result["states"][BROKEN] == "failed"
    # The single-call form from the CLI docs.
    out = subprocess.run([str(hermes.python), "-c", "from hermes_agent import Kernel; k=Kernel().boot(); "
                          "print(k.tools.dispatch('epmod_echo', {'text':'hi'}))"],
                         env=hermes.env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == {"plugin": "epmod", "echo": "hi"}
    tools = {t["name"]: t for t in json.loads(hermes.run("tools", "list", "--json").stdout)["tools"]}
    assert {tools[t]["plugin"] for t in TOOLS.values()} == set(TOOLS)


def test_memory_provider_loads_only_when_selected(hermes: Env) -> None:
    code = """
        import json
        from hermes_agent import Kernel
        k = Kernel().boot()
        print(json.dumps({"state": k.plugins["epmem"].state, "installed": k.slots.installed("memory")}))
        """
    assert hermes.python_json(code) == {"state": "not selected", "installed": []}
    assert hermes.rows()[MEMORY]["state"] == "not selected"
    assert hermes.imported() == set()

    hermes.run("config", "set", "memory.provider", MEMORY)
    assert hermes.config()["memory"]["provider"] == MEMORY
    assert hermes.rows()[MEMORY]["state"] == "enabled"
    assert hermes.imported() == set()

    row = hermes.rows("--load")[MEMORY]
    assert (row["state"], row["providers"]) == ("loaded", ["memory:epmem"]), row
    assert hermes.imported() == {MEMORY}
    got = hermes.python_json("""
        import json
        from hermes_agent import Kernel
        from hermes_agent.builtin_plugins.agent.memory_slot import active_memory
        k = Kernel().boot()
        provider = k.slots.get("memory", "epmem")
        print(json.dumps({"type": type(provider).__name__, "name": provider.name,
                          "remember": provider.remember("x"),
                          "active": [p.name for p in active_memory(k)]}))
        """)
    assert got == {"type": "EpMemProvider", "name": "epmem", "remember": 1, "active": ["epmem"]}


def test_remembered_scan_notices_install_and_uninstall(dists: list[Path], tmp_path: Path) -> None:
    """The entry-point scan is cached across runs; pip installing or removing invalidates it."""
    env = Env(make_venv(tmp_path / "venv"), tmp_path)
    wheel = next(d for d in dists if d.name.startswith("hermes_epfunc"))
    scan_in_process = """
        import json, sys
        from hermes_agent import Kernel
        Kernel().discover()
        print(json.dumps("importlib.metadata" in sys.modules))
        """
    assert "epfunc" not in env.rows()
    assert env.python_json(scan_in_process) is False  # nothing installed since: not rescanned
    pip_install(env.python, wheel)
    assert env.rows()["epfunc"]["version"] == "0.3.0"
    assert env.python_json(scan_in_process) is False
    _run([sys.executable, "-m", "pip", "--python", str(env.python), "uninstall", "-y", "-q",
          "hermes-epfunc"], env=_clean_env())
    assert "epfunc" not in env.rows()

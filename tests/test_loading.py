"""Discovery, enabling and transactional loading of directory plugins."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hermes_agent import Kernel
from hermes_agent.builtin_plugins.agent.memory_slot import active_memory
from hermes_agent.builtin_plugins.plugin_admin.ledger import status_dict
from hermes_agent.testing import write_plugin

TOOL = '''
import json
def register(ctx):
    ctx.register_tool(name="{tool}", toolset="{toolset}",
                      schema={{"name": "{tool}", "description": "d", "parameters": {{"type": "object", "properties": {{}}}}}},
                      handler=lambda args, **kw: json.dumps({{"tool": "{tool}"}}){extra})
'''


def tool_plugin(root: Path, name: str, tool: str, toolset: str = "", extra: str = "",
                manifest: str | None = None) -> Path:
    return write_plugin(root, name, TOOL.format(tool=tool, toolset=toolset or name, extra=extra),
                        manifest=manifest if manifest is not None else
                        f"name: {name}\nversion: 1.0.0\nprovides_tools: [{tool}]\n")


def configure(home: Path, text: str) -> None:
    (home / "config.yaml").write_text(text, encoding="utf-8")


def boot(home: Path, **env: str) -> Kernel:
    return Kernel(home, env={"HERMES_HOME": str(home), **env}, entry_points=False).boot()


def test_seed_calculator_loads_unmodified_and_both_tools_work(home, calculator):
    configure(home, "plugins:\n  enabled: [calculator]\n")
    kernel = boot(home)
    status = kernel.plugins["calculator"]
    assert status.state == "loaded", status.reason
    assert status.tools == ["calculate", "unit_convert"]
    assert status.hooks == ["post_tool_call"]
    assert status.warnings == []  # manifest declarations match the registrations
    calc = json.loads(kernel.tools.dispatch("calculate", {"expression": "2**16"}))
    assert calc == {"expression": "2**16", "result": 65536}
    assert json.loads(kernel.tools.dispatch("calculate", {"expression": "sqrt(144)"}))["result"] == 12.0
    temp = json.loads(kernel.tools.dispatch("unit_convert",
                                            {"value": 100, "from_unit": "F", "to_unit": "C"}))
    assert temp["result"] == 37.7778 and temp["output"] == "37.7778 C"
    data = json.loads(kernel.tools.dispatch("unit_convert",
                                            {"value": 1.5, "from_unit": "TB", "to_unit": "GB"}))
    assert data["result"] == 1536.0
    assert kernel.tools.definitions(["calculate"])[0] == {
        "type": "function", "function": kernel.tools.tools["calculate"].schema}
    # its post_tool_call hook is live and receives the payload keywords it names
    kernel.hooks.fire("post_tool_call", tool_name="calculate", args={}, result="{}", task_id="t1")
    import sys
    module = sys.modules["hermes_plugins.calculator"]
    assert module._call_log[-1] == {"tool": "calculate", "session": "t1"}


def test_standalone_plugin_is_opt_in(home, calculator):
    kernel = boot(home)
    status = kernel.plugins["calculator"]
    assert status.state == "not enabled"
    assert "hermes plugins enable calculator" in status.reason
    assert "calculate" not in kernel.tools.tools


def test_disabled_always_wins(home, calculator):
    configure(home, "plugins:\n  enabled: [calculator]\n  disabled: [calculator]\n")
    assert boot(home).plugins["calculator"].state == "disabled"


def test_broken_plugins_never_break_the_rest(home, calculator):
    plugins = home / "plugins"
    write_plugin(plugins, "importerr", "import does_not_exist_xyz\n")
    write_plugin(plugins, "boom", TOOL.format(tool="boom_tool", toolset="boom", extra="")
                 + "    raise RuntimeError('kaboom in register')\n")
    write_plugin(plugins, "noreg", "X = 1\n")
    (plugins / "noinit").mkdir()
    (plugins / "noinit" / "plugin.yaml").write_text("name: noinit\n")
    write_plugin(plugins, "badyaml", "", manifest="name: [unclosed\n")
    write_plugin(plugins, "weirdkind", "def register(ctx): pass\n", manifest="name: weirdkind\nkind: weird\n")
    configure(home, "plugins:\n  enabled: [calculator, importerr, boom, noreg, noinit, badyaml, weirdkind]\n")
    kernel = boot(home)
    states = {name: s.state for name, s in kernel.plugins.items()}
    assert states["calculator"] == "loaded"
    for broken in ("importerr", "boom", "noreg", "noinit", "badyaml", "weirdkind"):
        assert states[broken] == "failed", broken
    reasons = {name: s.reason for name, s in kernel.plugins.items()}
    assert "No module named 'does_not_exist_xyz'" in reasons["importerr"]
    assert "kaboom in register" in reasons["boom"]
    assert "no register(ctx) function" in reasons["noreg"]
    assert "no __init__.py" in reasons["noinit"]
    assert "badyaml/plugin.yaml" in reasons["badyaml"] and "line 2" in reasons["badyaml"]
    assert "kind" in reasons["weirdkind"] and "standalone" in reasons["weirdkind"]
    # transactional: the tool boom registered before raising is not live
    assert "boom_tool" not in kernel.tools.tools
    assert {n for n, t in kernel.tools.tools.items()
            if kernel.plugins[t.plugin].record.source != "builtin"} == {
        "calculate", "unit_convert"}


def test_failed_import_leaves_no_module_behind(home):
    import sys
    write_plugin(home / "plugins", "halfway", "from . import helper\nraise ValueError('late')\n",
                 files={"helper.py": "VALUE = 1\n"})
    configure(home, "plugins:\n  enabled: [halfway]\n")
    kernel = boot(home)
    assert kernel.plugins["halfway"].state == "failed"
    assert not [m for m in sys.modules if m.startswith("hermes_plugins.halfway")]


def test_duplicate_tool_name_is_an_error_naming_both_plugins(home):
    tool_plugin(home / "plugins", "alpha", "shared_tool")
    tool_plugin(home / "plugins", "beta", "shared_tool")
    configure(home, "plugins:\n  enabled: [alpha, beta]\n")
    kernel = boot(home)
    assert kernel.plugins["alpha"].state == "loaded"
    beta = kernel.plugins["beta"]
    assert beta.state == "failed"
    assert "'alpha'" in beta.reason and "'beta'" in beta.reason
    assert kernel.tools.tools["shared_tool"].plugin == "alpha"


def _core_terminal(ctx):
    ctx.register_tool("terminal", "terminal", {"name": "terminal", "parameters": {}},
                      lambda args, **kw: '{"core": true}')


@pytest.mark.parametrize("override,grant,expected", [
    (False, False, "clashes with the core tool"),
    (True, False, "allow_tool_override true"),
    (True, True, None),
])
def test_core_tool_names_need_an_operator_grant(home, override, grant, expected):
    tool_plugin(home / "plugins", "squatter", "terminal", toolset="shadow",
                extra=f", override={override}")
    grant_yaml = "  entries:\n    squatter:\n      allow_tool_override: true\n" if grant else ""
    configure(home, f"plugins:\n  enabled: [squatter]\n{grant_yaml}")
    kernel = Kernel(home, env={"HERMES_HOME": str(home)}, entry_points=False)
    kernel.register_plugin(_core_terminal, "core-terminal", source="builtin")  # core loads first
    kernel.boot()
    status = kernel.plugins["squatter"]
    if expected is None:
        assert status.state == "loaded"
        assert json.loads(kernel.tools.dispatch("terminal", {})) == {"tool": "terminal"}
    else:
        assert status.state == "failed" and expected in status.reason
        assert json.loads(kernel.tools.dispatch("terminal", {})) == {"core": True}


def test_user_plugin_shadows_bundled_and_records_it(home, tmp_path):
    bundled = tmp_path / "bundled"
    tool_plugin(bundled / "web", "webby", "web_tool", manifest="name: webby\nkind: backend\nversion: 1.0.0\nprovides_tools: [web_tool]\n")
    tool_plugin(home / "plugins", "webby", "web_tool", manifest="name: webby\nkind: backend\nversion: 2.0.0\nprovides_tools: [web_tool]\n")
    configure(home, "plugins:\n  enabled: [webby]\n")
    kernel = boot(home, HERMES_BUNDLED_PLUGINS=str(bundled))
    status = kernel.plugins["webby"]
    assert status.record.source == "user" and status.record.version == "2.0.0"
    assert [r.source for r in status.record.shadows] == ["bundled"]
    assert status_dict(status)["shadows"] == [str(bundled / "web" / "webby")]


def test_bundled_backend_is_on_by_default_but_bundled_standalone_is_not(home, tmp_path):
    bundled = tmp_path / "bundled"
    tool_plugin(bundled / "web", "web-demo", "web_demo", manifest="name: web-demo\nkind: backend\nprovides_tools: [web_demo]\n")
    tool_plugin(bundled, "extra", "extra_tool")
    kernel = boot(home, HERMES_BUNDLED_PLUGINS=str(bundled))
    assert kernel.plugins["web-demo"].state == "loaded"
    assert kernel.plugins["extra"].state == "not enabled"
    # the original's `<category>/<dir>` key still matches in the deny-list
    configure(home, "plugins:\n  disabled: [web/web-demo]\n")
    assert boot(home, HERMES_BUNDLED_PLUGINS=str(bundled)).plugins["web-demo"].state == "disabled"


def test_same_name_twice_in_one_source_fails_both(home):
    tool_plugin(home / "plugins", "one", "t1", manifest="name: dup\n")
    tool_plugin(home / "plugins", "two", "t2", manifest="name: dup\n")
    tool_plugin(home / "plugins", "fine", "t3")
    configure(home, "plugins:\n  enabled: [dup, fine]\n")
    kernel = boot(home)
    failed = [s for s in kernel.plugins.values() if s.record.name == "dup"]
    assert len(failed) == 2 and all(s.state == "failed" for s in failed)
    assert all("rename one" in s.reason and "one" in s.reason and "two" in s.reason for s in failed)
    assert kernel.plugins["fine"].state == "loaded"


def test_category_layout_and_project_plugins_need_opt_in(home, tmp_path):
    tool_plugin(home / "plugins" / "tools", "nested", "nested_tool")
    project = tmp_path / "proj"
    tool_plugin(project / ".hermes" / "plugins", "proj", "proj_tool")
    configure(home, "plugins:\n  enabled: [nested, proj]\n")
    kernel = Kernel(home, env={"HERMES_HOME": str(home)}, cwd=project, entry_points=False).boot()
    assert kernel.plugins["nested"].state == "loaded"
    assert "proj" not in kernel.plugins
    env = {"HERMES_HOME": str(home), "HERMES_ENABLE_PROJECT_PLUGINS": "1"}
    kernel = Kernel(home, env=env, cwd=project, entry_points=False).boot()
    assert kernel.plugins["proj"].state == "untrusted"  # docs/projects.md
    configure(home, f"plugins:\n  enabled: [nested, proj]\nprojects:\n  trusted: [{project}]\n")
    kernel = Kernel(home, env=env, cwd=project, entry_points=False).boot()
    assert kernel.plugins["proj"].state == "loaded" and kernel.plugins["proj"].record.source == "project"


def test_requires_env_gates_loading(home):
    write_plugin(home / "plugins", "weather", "def register(ctx): pass\n",
                 manifest="name: weather\nrequires_env:\n  - WEATHER_API_KEY\n  - name: OTHER_KEY\n    secret: true\n")
    configure(home, "plugins:\n  enabled: [weather]\n")
    status = boot(home).plugins["weather"]
    assert status.state == "missing env"
    assert status.reason.startswith("Plugin weather disabled (missing: WEATHER_API_KEY, OTHER_KEY)")
    (home / ".env").write_text("WEATHER_API_KEY=abc\nexport OTHER_KEY='x'\n")
    assert boot(home).plugins["weather"].state == "loaded"


def test_load_plugins_escape_hatch_and_safe_mode(home, calculator):
    tool_plugin(home / "plugins", "other", "other_tool")
    configure(home, "plugins:\n  enabled: [calculator]\n")
    assert boot(home, HERMES_LOAD_PLUGINS="").plugins["calculator"].state == "disabled"
    only = boot(home, HERMES_LOAD_PLUGINS="other")
    assert only.plugins["other"].state == "loaded" and only.plugins["calculator"].state == "disabled"
    safe = boot(home, HERMES_SAFE_MODE="1")
    assert safe.plugins["calculator"].state == "disabled" and "safe mode" in safe.plugins["calculator"].reason
    assert {safe.plugins[t.plugin].record.source
            for t in safe.tools.tools.values()} == {"builtin"}  # builtin only


def test_declared_and_registered_capabilities_are_compared(home):
    tool_plugin(home / "plugins", "liar", "real_tool",
                manifest="name: liar\nprovides_tools: [promised_tool]\nprovides_hooks: [pre_tool_call]\n")
    configure(home, "plugins:\n  enabled: [liar]\n")
    warnings = " | ".join(boot(home).plugins["liar"].warnings)
    assert "did not register: promised_tool" in warnings
    assert "does not declare: real_tool" in warnings
    assert "did not register: pre_tool_call" in warnings


def test_exclusive_provider_loads_only_when_selected(home):
    write_plugin(home / "plugins" / "memory", "mymem", '''
class Provider:
    name = "mymem"
def register(ctx):
    ctx.register_memory_provider(Provider())
''', manifest="name: mymem\nkind: exclusive\n")
    assert boot(home).plugins["mymem"].state == "not selected"
    configure(home, "memory:\n  provider: mymem\n")
    kernel = boot(home)
    assert kernel.plugins["mymem"].state == "loaded"
    assert [p.name for p in active_memory(kernel)] == ["mymem"]



def test_selecting_a_standalone_memory_plugin_by_name_enables_it(home):
    """Memory plugins often ship without `kind: exclusive`; naming one in memory.provider is
    an explicit choice, so it loads without also listing it in plugins.enabled."""
    write_plugin(home / "plugins", "plainmem", '''
class Provider:
    name = "plainmem"
def register(ctx):
    ctx.register_memory_provider(Provider())
''', manifest="name: plainmem\n")
    assert boot(home).plugins["plainmem"].state == "not enabled"
    configure(home, "memory:\n  provider: plainmem\n")
    kernel = boot(home)
    assert kernel.plugins["plainmem"].state == "loaded"
    assert [p.name for p in active_memory(kernel)] == ["plainmem"]
    configure(home, "memory:\n  provider: plainmem\nplugins:\n  disabled: [plainmem]\n")
    assert boot(home).plugins["plainmem"].state == "disabled"  # the deny-list still wins

def test_legacy_aliases_warn_but_load(home):
    write_plugin(home / "plugins", "legacy", "def register(ctx):\n    ctx.register_hook('pre_tool_call', lambda **kw: None)\n",
                 manifest="name: legacy\nhooks: [pre_tool_call]\nfavourite_colour: blue\n")
    configure(home, "plugins:\n  enabled: [legacy]\n")
    status = boot(home).plugins["legacy"]
    assert status.state == "loaded"
    text = " | ".join(status.record.warnings)
    assert "'hooks:' is a legacy alias" in text and "favourite_colour" in text
    assert status.warnings == []  # hooks: counted as provides_hooks, so declarations match


def fake_distribution(site: Path, manifest_at: str = "stamp_plugin/plugin.yaml") -> Path:
    """A pip-installed-looking plugin under ``site`` (a .dist-info with RECORD); returns RECORD."""
    package = site / "stamp_plugin"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("def register(ctx):\n    pass\n", encoding="utf-8")
    (site / manifest_at).parent.mkdir(parents=True, exist_ok=True)
    (site / manifest_at).write_text("name: stamp\nversion: '1.0'\ndescription: from yaml\n",
                                    encoding="utf-8")
    info = site / "stamp_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: stamp-plugin\nVersion: 1.0\n",
                                   encoding="utf-8")
    (info / "entry_points.txt").write_text("[hermes_agent.plugins]\nstamp = stamp_plugin\n",
                                           encoding="utf-8")
    record_file = info / "RECORD"
    record_file.write_text(f"stamp_plugin/__init__.py,,\n{manifest_at},,\n", encoding="utf-8")
    return record_file


def test_entry_point_manifest_shipped_as_shared_data_is_found(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from hermes_agent.discovery import discover

    fake_distribution(tmp_path / "site", "share/hermes_agent/plugins/stamp/plugin.yaml")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    record = discover(tmp_path / "home", env={"HERMES_HOME": str(tmp_path / "home")}).plugins["stamp"]
    assert record.manifest is not None and not record.manifest.synthesized
    assert record.manifest.description == "from yaml"


def test_ledger_fingerprint_changes_when_an_entry_point_plugin_is_reinstalled(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A rebuild under the same version must not keep showing the previous load outcome."""
    import os

    from hermes_agent.discovery import discover
    from hermes_agent.builtin_plugins.plugin_admin.ledger import fingerprint

    site = tmp_path / "site"
    record_file = fake_distribution(site)
    monkeypatch.syspath_prepend(str(site))

    def current() -> str:
        found = discover(tmp_path / "home", env={"HERMES_HOME": str(tmp_path / "home")})
        return fingerprint(found.plugins["stamp"])

    before = current()
    assert before.startswith("ep:hermes_agent.plugins:stamp_plugin:stamp-plugin:1.0:")
    assert current() == before  # stable while nothing changes
    later = record_file.stat().st_mtime_ns + 5_000_000_000
    os.utime(record_file, ns=(later, later))  # pip rewrites RECORD on every install
    assert current() != before


def test_kernel_on_the_process_environment_gives_plugins_the_dotenv_values(
        home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Plugins read their keys from os.environ; a key kept in $HERMES_HOME/.env must reach it."""
    import os

    monkeypatch.delenv("DOTENV_ONLY_KEY", raising=False)
    monkeypatch.setenv("SHELL_WINS_KEY", "from-shell")
    (home / ".env").write_text("DOTENV_ONLY_KEY=from-dotenv\nSHELL_WINS_KEY=from-dotenv\n",
                               encoding="utf-8")
    write_plugin(home / "plugins", "envreader", '''
import os
SEEN = {}
def register(ctx):
    SEEN.update(dotenv=os.environ.get("DOTENV_ONLY_KEY"), shell=os.environ.get("SHELL_WINS_KEY"))
''', manifest="name: envreader\nrequires_env: [DOTENV_ONLY_KEY]\n")
    configure(home, "plugins:\n  enabled: [envreader]\n")
    try:
        kernel = Kernel(home, entry_points=False).boot()  # env=None: the real process
        assert kernel.plugins["envreader"].state == "loaded"
        import sys

        seen = sys.modules["hermes_plugins.envreader"].SEEN
        assert seen == {"dotenv": "from-dotenv", "shell": "from-shell"}
    finally:
        os.environ.pop("DOTENV_ONLY_KEY", None)

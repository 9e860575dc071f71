"""PluginStatus.code / .cause: one machine-readable code per way a plugin fails or is skipped,
set by the kernel where it happens, stored in the load ledger and shown by `plugins list --json`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from hermes_agent import Kernel
from hermes_agent.builtin_plugins.plugin_admin.ledger import status_dict
from hermes_agent.cli.root import main
from hermes_agent.testing import write_plugin

PLAIN = "def register(ctx):\n    pass\n"
TOOL = """\
def register(ctx):
    ctx.register_tool("{tool}", "t", {{"name": "{tool}", "description": "d",
                      "parameters": {{"type": "object", "properties": {{}}}}}},
                      lambda args, **kw: "{{}}")
"""
HOOKBAD = """\
from hermes_agent import hookimpl


@hookimpl
def on_session_start(session_id, no_such_argument):
    pass
"""
FAILING = {  # directory -> (__init__.py, plugin.yaml, expected code, expected cause)
    "boom": ("raise ImportError('cannot find libboom\\nsecond line')\n", "name: boom\n",
             "import_error", "ImportError: cannot find libboom"),
    "badreg": ("def register(ctx):\n    raise KeyError('api_url')\n", "name: badreg\n",
               "register_error", "KeyError: 'api_url'"),
    "nothing": ("X = 1\n", "name: nothing\n", "no_entry", ""),
    "hookbad": (HOOKBAD, "name: hookbad\n", "hookimpl_invalid", "PluginValidationError: "),
    "clash_a": (TOOL.format(tool="same_t"), "name: clash_a\n", "", ""),
    "clash_b": (TOOL.format(tool="same_t"), "name: clash_b\n", "duplicate", ""),
    "override": (TOOL.format(tool="terminal"), "name: override\n", "core_tool_override", ""),
    "future": ("", "name: future\nrequires_hermes: '>=99'\n", "incompatible", ""),
    "badyaml": ("", "name: badyaml\nrequires_env: WEATHER\n", "manifest_invalid", ""),
    "badclause": ("", "name: badclause\nrequires_hermes: 'soon'\n", "manifest_invalid", ""),
    "reuse": ("def register(ctx):\n    pass\n", "name: plugin-admin\n", "duplicate", ""),
    "twin_1": ("def register(ctx):\n    pass\n", "name: twin\n", "duplicate", ""),
    "twin_2": ("def register(ctx):\n    pass\n", "name: twin\n", "duplicate", ""),
}
SKIPPED = {  # directory -> (plugin.yaml, expected code)
    "idle": ("name: idle\n", "not_enabled"),
    "shut": ("name: shut\n", "disabled"),
    "keyless": ("name: keyless\nrequires_env: [KEYLESS_TOKEN]\n", "missing_env"),
    "picky": ("name: picky\nkind: exclusive\n", "not_selected"),
}


@pytest.fixture
def plugins_home(home: Path) -> Path:
    for directory, (init, manifest, _, _) in FAILING.items():
        write_plugin(home / "plugins", directory, init, manifest=manifest)
    for directory, (manifest, _) in SKIPPED.items():
        write_plugin(home / "plugins", directory, PLAIN, manifest=manifest)
    # A memory provider (by its folder) that registers no provider.
    write_plugin(home / "plugins" / "memory", "memless", PLAIN,
                 manifest="name: memless\nkind: exclusive\n")
    enabled = [n for n in [*FAILING, *SKIPPED] if n not in ("idle", "picky")]
    enabled += ["twin", "plugin-admin"]
    (home / "config.yaml").write_text(yaml.safe_dump(
        {"plugins": {"enabled": enabled, "disabled": ["shut"]}, "memory": {"provider": "memless"}}))
    return home


def statuses(home: Path, **env: str) -> dict[str, object]:
    kernel = Kernel(home, env={"HERMES_HOME": str(home), **env}, entry_points=False).boot()
    return {s.record.path.name if s.record.path else s.name: s for s in kernel.plugins.values()}


def test_each_failure_site_sets_its_code_and_cause(plugins_home: Path):
    found = statuses(plugins_home)
    for directory, (_, _, code, cause) in FAILING.items():
        status = found[directory]
        if not code:
            assert status.state == "loaded" and status.code == "", directory
            continue
        assert (status.state, status.code) == ("failed", code), (directory, status.reason)
        assert status.cause.startswith(cause), (directory, status.cause)
        assert "\n" not in status.cause
        if not cause:
            assert status.cause == "", (directory, status.cause)
    assert "no_such_argument" in found["hookbad"].reason  # the cause is its first line only
    assert (found["memless"].state, found["memless"].code) == ("failed", "no_provider")
    for directory, (_, code) in SKIPPED.items():
        assert found[directory].code == code, (directory, found[directory].reason)
    assert found["plugin_admin"].state == "loaded" and found["plugin_admin"].code == ""
    data = status_dict(found["boom"])
    assert (data["code"], data["cause"]) == ("import_error", "ImportError: cannot find libboom")


def test_safe_mode_and_load_filter_codes(plugins_home: Path):
    found = statuses(plugins_home, HERMES_SAFE_MODE="1")
    assert (found["keyless"].state, found["keyless"].code) == ("disabled", "safe_mode")
    assert found["plugin_admin"].state == "loaded"  # builtins still load
    found = statuses(plugins_home, HERMES_LOAD_PLUGINS="badreg")
    assert (found["keyless"].state, found["keyless"].code) == ("disabled", "load_filter")
    assert found["badreg"].code == "register_error"  # the filter lets it through


def test_codes_reach_the_ledger_and_plugins_list_json(plugins_home: Path, capsys):
    assert main(["plugins", "list", "--json", "--load"]) == 0
    loaded = {r["location"].rsplit("/", 1)[-1]: r for r in json.loads(capsys.readouterr().out)}
    assert (loaded["boom"]["code"], loaded["boom"]["cause"]) == \
        ("import_error", "ImportError: cannot find libboom")
    ledger = json.loads((plugins_home / "cache" / "plugin-status.json").read_text())
    assert (ledger["badreg"]["code"], ledger["badreg"]["cause"]) == ("register_error",
                                                                    "KeyError: 'api_url'")
    # Without --load the rows come from the ledger (loaded plugins) and the decision (others).
    assert main(["plugins", "list", "--json"]) == 0
    rows = {r["location"].rsplit("/", 1)[-1]: r for r in json.loads(capsys.readouterr().out)}
    assert (rows["boom"]["state"], rows["boom"]["code"]) == ("failed", "import_error")
    assert rows["boom"]["cause"] == "ImportError: cannot find libboom"
    assert (rows["idle"]["code"], rows["shut"]["code"]) == ("not_enabled", "disabled")
    assert (rows["keyless"]["code"], rows["future"]["code"]) == ("missing_env", "incompatible")


def test_doctor_explains_each_failure_by_its_code(plugins_home: Path, capsys):
    assert main(["plugins", "doctor", "--load", "--json"]) == 1
    result = json.loads(capsys.readouterr().out)
    reports = {r["location"].rsplit("/", 1)[-1]: r for r in result["plugins"]}
    for directory, (_, _, code, cause) in FAILING.items():
        if code:
            first = reports[directory]["reasons"][0]
            assert first["code"] == code and first["fix"], (directory, first)
            if code != "hookimpl_invalid":
                assert cause in first["message"], (directory, first)
    assert reports["memless"]["reasons"][0]["code"] == "no_provider"
    assert "no_such_argument" in reports["hookbad"]["reasons"][0]["message"]
    override = reports["override"]["reasons"][0]
    assert "plugins.entries.override.allow_tool_override" in override["fix"]
    assert reports["future"]["reasons"][0]["message"].startswith("incompatible: ")


def test_every_status_code_is_tested_and_documented():
    import re

    import hermes_agent.kernel as kernel_module

    doc = (Path(__file__).parents[2] / "docs" / "writing-plugins.md").read_text(encoding="utf-8")
    tested = {c for *_, c, _ in FAILING.values() if c} | {c for _, c in SKIPPED.values()}
    tested |= {"no_provider", "safe_mode", "load_filter"}
    raised = set(re.findall(r'code="([a-z_]+)"', Path(kernel_module.__file__).read_text()))
    assert raised <= tested, raised - tested
    for code in tested:
        assert f"| `{code}` |" in doc, code

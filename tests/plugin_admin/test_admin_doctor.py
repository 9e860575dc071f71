"""`hermes plugins doctor` names the right reason for each way a plugin stays dark, and
`hermes plugins validate` checks a plugin under development."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml

from hermes_agent.cli.root import main
from hermes_agent.testing import write_plugin

TOOL = """\
import json


def register(ctx):
    ctx.register_tool("{tool}", "t", {{"name": "{tool}", "description": "d",
                      "parameters": {{"type": "object", "properties": {{}}}}}},
                      lambda args, **kw: json.dumps({{}}))
"""
PLUGINS = {  # name -> (__init__.py, plugin.yaml)
    "idle": (TOOL.format(tool="idle_t"), "name: idle\nprovides_tools: [idle_t]\n"),
    "off": (TOOL.format(tool="off_t"), "name: off\nprovides_tools: [off_t]\n"),
    "keyless": (TOOL.format(tool="k_t"), "name: keyless\nprovides_tools: [k_t]\n"
                "requires_env:\n  - name: KEYLESS_TOKEN\n    url: https://keys.example.org\n"),
    "boom": ("import json\nraise ImportError('cannot find libboom\\nsecond line')\n", "name: boom\n"),
    "badreg": ("def register(ctx):\n    raise KeyError('api_url')\n", "name: badreg\n"),
    "badyaml": ("", "name: badyaml\nrequires_env: WEATHER\n"),
    "sneaky": (TOOL.format(tool="sneaky_t") + "    ctx.register_hook('post_tool_call', "
               "lambda **kw: None)\n", "name: sneaky\nprovides_hooks: [post_tool_call]\n"),
    "good": (TOOL.format(tool="good_t"), "name: good\nversion: 2.0.0\nprovides_tools: [good_t]\n"),
}
EXPECTED = {"idle": "not_enabled", "off": "disabled", "keyless": "missing_env",
            "boom": "import_error", "badreg": "register_error", "badyaml": "manifest_invalid",
            "sneaky": "undeclared_tool"}


@pytest.fixture
def doctor(home, capsys, monkeypatch):
    for name, (init, manifest) in PLUGINS.items():
        write_plugin(home / "plugins", name, init, manifest=manifest)
    enabled = [n for n in PLUGINS if n != "idle"]
    (home / "config.yaml").write_text(yaml.safe_dump(
        {"plugins": {"enabled": enabled, "disabled": ["off"]}}))
    monkeypatch.delenv("KEYLESS_TOKEN", raising=False)
    saved = dict(os.environ)

    def run(*args: str) -> tuple[int, str, str]:
        code = main(["plugins", "doctor", "--load", *args])
        out = capsys.readouterr()
        return code, out.out, out.err
    yield run
    os.environ.clear()
    os.environ.update(saved)


def test_each_reason_is_named(doctor):
    code, out, _ = doctor("--json")
    assert code == 1  # plugins the user enabled are not active
    reports = {r["name"]: r for r in json.loads(out)["plugins"]}
    for name, reason in EXPECTED.items():
        codes = [r["code"] for r in reports[name]["reasons"]]
        assert reason in codes, (name, reports[name]["reasons"])
    assert reports["idle"]["wanted"] is False and reports["off"]["active"] is False
    keyless = next(r for r in reports["keyless"]["reasons"] if r["code"] == "missing_env")
    assert "KEYLESS_TOKEN" in keyless["message"] and ".env" in keyless["fix"]
    assert "https://keys.example.org" in keyless["fix"]
    boom = next(r for r in reports["boom"]["reasons"] if r["code"] == "import_error")
    assert boom["message"] == "importing it failed: ImportError: cannot find libboom"
    badreg = next(r for r in reports["badreg"]["reasons"] if r["code"] == "register_error")
    assert "KeyError: 'api_url'" in badreg["message"]
    badyaml = next(r for r in reports["badyaml"]["reasons"] if r["code"] == "manifest_invalid")
    assert "requires_env" in badyaml["message"]
    sneaky = reports["sneaky"]
    assert sneaky["active"] is True and sneaky["tools"] == 1 and sneaky["hooks"] == 1
    assert [r["code"] for r in sneaky["reasons"]] == ["undeclared_tool"]
    good = reports["good"]
    assert (good["active"], good["tools"], good["reasons"]) == (True, 1, [])


def test_text_report_and_exit_codes_per_plugin(doctor):
    code, out, _ = doctor("good")
    assert code == 0 and "✓ good 2.0.0 (user): loaded, 1 tool, 0 hooks" in out
    code, out, _ = doctor("idle")
    assert code == 0  # not enabled by the user: reported, but not a failure
    assert "[not_enabled]" in out and "hermes plugins enable idle" in out
    code, out, _ = doctor("keyless")
    assert code == 1 and "[missing_env]" in out and "KEYLESS_TOKEN" in out


def test_enabled_name_that_is_not_installed(doctor, home):
    (home / "config.yaml").write_text("plugins:\n  enabled: [good, ghost]\n")
    code, out, _ = doctor()
    assert code == 1 and "[not_installed] plugins.enabled names 'ghost'" in out


def test_validate(home, tmp_path, capsys):
    def run(path: Path) -> tuple[int, dict]:
        code = main(["plugins", "validate", str(path), "--json"])
        return code, json.loads(capsys.readouterr().out)

    init, manifest = PLUGINS["good"]
    good = write_plugin(tmp_path / "dev", "good", init, manifest=manifest)
    code, result = run(good)
    assert code == 0 and result["ok"] and result["tools"] == ["good_t"]
    code, result = run(good / "plugin.yaml")
    assert code == 0 and result["name"] == "good"
    init, manifest = PLUGINS["sneaky"]
    code, result = run(write_plugin(tmp_path / "dev", "sneaky", init, manifest=manifest))
    assert code == 1 and any("sneaky_t" in e and "provides_tools" in e for e in result["errors"])
    init, manifest = PLUGINS["badyaml"]
    code, result = run(write_plugin(tmp_path / "dev", "badyaml", init, manifest=manifest))
    assert code == 1 and any("requires_env" in e for e in result["errors"])
    init, manifest = PLUGINS["badreg"]
    code, result = run(write_plugin(tmp_path / "dev", "badreg", init, manifest=manifest))
    assert code == 1 and "KeyError" in result["errors"][0]
    # Nothing was enabled or written in the user's home.
    assert not (home / "config.yaml").exists() and list((home / "plugins").iterdir()) == []


def test_memory_plugin_selected_by_memory_provider_is_not_reported_as_not_enabled(home, capsys):
    """The kernel loads a plugin that memory.provider names, whatever its kind; doctor agrees."""
    write_plugin(home / "plugins", "plainmem", "class P:\n    name = 'plainmem'\n"
                 "def register(ctx):\n    ctx.register_memory_provider(P())\n",
                 manifest="name: plainmem\n")
    (home / "config.yaml").write_text(yaml.safe_dump({"memory": {"provider": "plainmem"}}))
    code = main(["plugins", "doctor", "plainmem", "--load", "--json"])
    report = json.loads(capsys.readouterr().out)
    row = next(r for r in report["plugins"] if r["name"] == "plainmem")
    assert row["state"] == "loaded" and code == 0
    assert "not_enabled" not in [r["code"] for r in row["reasons"]]

"""`hermes plugins doctor` for reasons that come from where a plugin is and how it is run: an
entry point that fails to load, a plugin shadowed by a higher-precedence source, a provider
its slot does not select, safe mode, HERMES_LOAD_PLUGINS, and a lock entry whose plugin is gone."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from hermes_agent.cli.root import main
from hermes_agent.testing import write_plugin

SEEKER = """\
from types import SimpleNamespace


def register(ctx):
    ctx.register_web_search_provider(SimpleNamespace(name="seeker", search=lambda q, **kw: []))
"""
PLAIN = "def register(ctx):\n    pass\n"


@pytest.fixture
def doctor(home, capsys):
    def run(*args: str) -> tuple[int, dict]:
        code = main(["plugins", "doctor", "--load", "--json", *args])
        return code, json.loads(capsys.readouterr().out)
    return run


def reasons(result: dict, name: str) -> dict[str, dict]:
    report = next(r for r in result["plugins"] if r["name"] == name)
    return {r["code"]: r for r in report["reasons"]}


def enable(home: Path, *names: str, **extra: object) -> None:
    config = {"plugins": {"enabled": list(names)}, **extra}
    (home / "config.yaml").write_text(yaml.safe_dump(config))


def fake_entry_point(site: Path, name: str, target: str) -> None:
    """A pip-installed-looking distribution whose entry point names a module that is missing."""
    info = site / f"{name}_dist-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}-dist\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[hermes_agent.plugins]\n{name} = {target}\n")
    (info / "RECORD").write_text("")


def test_entry_point_that_fails_to_load(home, tmp_path, doctor, monkeypatch):
    fake_entry_point(tmp_path / "site", "epfail", "epfail_module_that_is_gone")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    enable(home, "epfail")
    code, result = doctor("epfail")
    assert code == 1  # enabled, not active
    reason = reasons(result, "epfail")["entry_point_error"]
    assert reason["message"] == ("its entry point failed to load: ModuleNotFoundError: "
                                 "No module named 'epfail_module_that_is_gone'")
    assert "reinstall epfail-dist" in reason["fix"]


def test_installed_folder_shadowed_by_a_project_plugin(home, tmp_path, doctor, monkeypatch, capsys):
    src = write_plugin(tmp_path / "src", "echo", PLAIN, manifest="name: echo\nversion: 1.0.0\n")
    assert main(["plugins", "install", str(src), "--enable", "--no-input"]) == 0
    capsys.readouterr()
    project = tmp_path / "project"
    write_plugin(project / ".hermes" / "plugins", "echo", PLAIN,
                 manifest="name: echo\nversion: 9.0.0\n")
    monkeypatch.chdir(project)
    monkeypatch.setenv("HERMES_ENABLE_PROJECT_PLUGINS", "1")
    code, result = doctor("echo")  # an untrusted folder's plugin does not load
    untrusted = reasons(result, "echo")["untrusted_project"]
    assert code == 1 and f"hermes trust {project}" in untrusted["message"]
    assert main(["trust", str(project)]) == 0
    capsys.readouterr()
    code, result = doctor("echo")
    assert code == 1
    shadowed = {g["code"]: g for g in result["problems"]}["shadowed"]
    assert str(home / "plugins" / "echo") in shadowed["message"]
    assert "project plugin" in shadowed["message"] and shadowed["level"] == "error"
    note = reasons(result, "echo")["shadows"]
    assert note["level"] == "note" and str(home / "plugins" / "echo") in note["message"]
    report = result["plugins"][0]
    assert (report["source"], report["version"], report["active"]) == ("project", "9.0.0", True)


def test_provider_its_slot_does_not_select(home, doctor):
    write_plugin(home / "plugins", "seeker", SEEKER, manifest="name: seeker\n")
    enable(home, "seeker", web={"backend": "elsewhere"})
    code, result = doctor("seeker")
    assert code == 0  # loaded; the selection is a note, not a failure
    note = reasons(result, "seeker")["slot_not_selected"]
    assert "web.backend selects elsewhere" in note["message"]
    assert note["fix"] == "hermes config set web.backend seeker"
    enable(home, "seeker", web={"backend": "seeker"})
    assert "slot_not_selected" not in reasons(doctor("seeker")[1], "seeker")


def test_safe_mode_and_load_filter(home, doctor, monkeypatch):
    write_plugin(home / "plugins", "calm", PLAIN, manifest="name: calm\n")
    write_plugin(home / "plugins", "other", PLAIN, manifest="name: other\n")
    enable(home, "calm", "other")
    monkeypatch.setenv("HERMES_SAFE_MODE", "1")
    code, result = doctor("calm")
    assert code == 1 and list(reasons(result, "calm")) == ["safe_mode"]
    assert reasons(result, "calm")["safe_mode"]["fix"] == "unset HERMES_SAFE_MODE"
    monkeypatch.delenv("HERMES_SAFE_MODE")
    monkeypatch.setenv("HERMES_LOAD_PLUGINS", "other")
    code, result = doctor()
    assert code == 1 and list(reasons(result, "calm")) == ["load_filter"]
    assert reasons(result, "other") == {}  # listed: it loads


def test_lock_entry_whose_plugin_is_gone(home, tmp_path, doctor, capsys):
    src = write_plugin(tmp_path / "src", "ghost", PLAIN, manifest="name: ghost\n")
    assert main(["plugins", "install", str(src), "--no-input"]) == 0
    capsys.readouterr()
    shutil.rmtree(home / "plugins" / "ghost")  # deleted by hand; the lock still names it
    code, result = doctor()
    assert code == 0  # a warning: nothing the user enabled is broken
    orphan = {g["code"]: g for g in result["problems"]}["lock_orphan"]
    assert "'ghost' (path)" in orphan["message"] and orphan["level"] == "warning"
    assert "hermes plugins remove ghost" in orphan["fix"]
    code, result = doctor("ghost")  # asked for by name: reported, not "unknown"
    assert [g["code"] for g in result["problems"]] == ["lock_orphan"]

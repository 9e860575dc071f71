"""Project trust: `projects.trusted` (validated), `hermes trust [PATH] / --list / --revoke`,
the home folder and `/` never trusted through another entry, and project plugins that load
only in a trusted folder (`hermes plugins list` says why)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from hermes_agent import ConfigError, Kernel, ProjectTrust, load_config, write_config_value
from hermes_agent.cli.root import main
from hermes_agent.testing import write_plugin

TOOL = """\
def register(ctx):
    ctx.register_tool("proj_tool", "proj", {"name": "proj_tool", "description": "d",
                      "parameters": {"type": "object", "properties": {}}},
                      lambda args, **kw: "{}")
"""


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def trusted(home: Path) -> list[str]:
    data = yaml.safe_load((home / "config.yaml").read_text()) or {}
    return (data.get("projects") or {}).get("trusted", [])


def test_a_folder_trusts_its_subfolders_but_not_its_parent(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "sub" / "deeper").mkdir(parents=True)
    trust = ProjectTrust(_config(tmp_path, [project]), {"HOME": str(tmp_path / "home")})
    assert trust.covers(project) and trust.covers(project / "sub" / "deeper")
    assert not trust.covers(tmp_path) and not trust.covers(tmp_path / "projectile")


def test_home_and_root_are_trusted_only_by_name_and_never_their_subfolders(tmp_path: Path) -> None:
    home = tmp_path / "me"
    (home / "cloned" / "repo").mkdir(parents=True)
    env = {"HOME": str(home)}
    trust = ProjectTrust(_config(tmp_path, [home, Path("/")]), env)
    assert trust.covers(home) and trust.covers("/")
    assert not trust.covers(home / "cloned" / "repo")  # listing ~ does not trust every clone
    assert not ProjectTrust(_config(tmp_path, [tmp_path]), env).covers(home)  # nor a parent of it
    assert ProjectTrust(_config(tmp_path, [tmp_path]), env).covers(home / "cloned")
    assert ProjectTrust(_config(tmp_path, ["~/cloned"]), env).covers(home / "cloned" / "repo")


def test_a_relative_entry_is_refused_with_the_fix(home: Path) -> None:
    with pytest.raises(ConfigError) as error:
        write_config_value(home, "projects.trusted", ["work/project"])
    assert "'work/project' is not an absolute folder" in str(error.value)
    assert "`hermes trust PATH` writes it for you" in str(error.value)
    assert not (home / "config.yaml").exists()  # refused: nothing written
    (home / "config.yaml").write_text("projects:\n  trusted: [relative/x]\n")
    with pytest.raises(ConfigError) as error:
        load_config(home)
    assert "projects.trusted" in str(error.value) and "'relative/x'" in str(error.value)


def test_trust_list_and_revoke(home: Path, tmp_path: Path, capsys, monkeypatch) -> None:
    project = tmp_path / "repo"
    (project / ".git").mkdir(parents=True)
    (project / "src").mkdir()
    monkeypatch.chdir(project / "src")
    code, out, _ = run(capsys, "trust")  # the git root, not the working folder
    assert code == 0 and f"trusted {project} " in out
    assert trusted(home) == [str(project)]
    assert "trusted already" in run(capsys, "trust")[1]
    assert f"trusted already, through {project}" in run(capsys, "trust", "src")[1]
    assert run(capsys, "trust", "--list")[1].strip() == str(project)
    code, _, err = run(capsys, "trust", "--revoke", "src")
    assert code == 1 and f"`hermes trust --revoke {project}`" in err
    code, out, _ = run(capsys, "trust", "--revoke", str(project))
    assert code == 0 and "no longer trusted" in out and trusted(home) == []
    assert "No folder is trusted" in run(capsys, "trust", "--list")[1]
    assert run(capsys, "trust", "--list", str(project))[0] == 2  # one action at a time


def test_trust_keeps_the_rest_of_config_yaml(home: Path, tmp_path: Path, capsys) -> None:
    (home / "config.yaml").write_text("# my settings\nmodel:\n  default: m  # the one\n")
    assert run(capsys, "trust", str(tmp_path))[0] == 0
    text = (home / "config.yaml").read_text()
    assert "# my settings" in text and "# the one" in text and trusted(home) == [str(tmp_path)]


def test_trust_never_takes_the_home_folder_implicitly(home: Path, tmp_path: Path, capsys,
                                                     monkeypatch) -> None:
    me = tmp_path / "me"
    me.mkdir()
    monkeypatch.setenv("HOME", str(me))
    monkeypatch.chdir(me)
    code, _, err = run(capsys, "trust")
    assert code == 1 and "never trusts by itself" in err and f"`hermes trust {me}`" in err
    assert not (home / "config.yaml").exists() or trusted(home) == []
    (me / ".git").mkdir()  # a home folder kept in git: "this project" is the working folder
    (me / "notes").mkdir()
    monkeypatch.chdir(me / "notes")
    code, out, _ = run(capsys, "trust")
    assert code == 0 and f"trusted {me / 'notes'} " in out
    assert run(capsys, "trust", "--revoke", str(me / "notes"))[0] == 0
    code, out, _ = run(capsys, "trust", "~")  # named: trusted, that folder alone
    assert code == 0 and "its subfolders are not trusted through it" in out
    assert trusted(home) == [str(me)]
    assert "this folder alone" in run(capsys, "trust", "--list")[1]


def test_a_project_plugin_loads_only_in_a_trusted_folder(home: Path, tmp_path: Path, capsys,
                                                         monkeypatch) -> None:
    project = tmp_path / "project"
    write_plugin(project / ".hermes" / "plugins", "projtool", TOOL,
                 manifest="name: projtool\nprovides_tools: [proj_tool]\n")
    (home / "config.yaml").write_text("plugins:\n  enabled: [projtool]\n")
    monkeypatch.setenv("HERMES_ENABLE_PROJECT_PLUGINS", "1")
    monkeypatch.chdir(project)
    env = {"HERMES_HOME": str(home), "HERMES_ENABLE_PROJECT_PLUGINS": "1"}
    kernel = Kernel(home, env=env, cwd=project, entry_points=False).boot()
    status = kernel.plugins["projtool"]
    assert status.state == "untrusted" and status.code == "untrusted_project"
    assert "proj_tool" not in kernel.tools.tools
    code, out, _ = run(capsys, "plugins", "list")
    assert code == 0 and "untrusted" in out and f"hermes trust {project}" in out
    rows = {r["name"]: r for r in json.loads(run(capsys, "plugins", "list", "--json")[1])}
    assert rows["projtool"]["state"] == "untrusted"
    assert run(capsys, "trust")[0] == 0
    kernel = Kernel(home, env=env, cwd=project, entry_points=False).boot()
    assert kernel.plugins["projtool"].state == "loaded" and "proj_tool" in kernel.tools.tools
    rows = {r["name"]: r for r in json.loads(run(capsys, "plugins", "list", "--json",
                                                 "--load")[1])}
    assert rows["projtool"]["state"] == "loaded"


def test_a_project_plugin_in_a_category_folder_needs_the_trust_of_its_project(
        home: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    write_plugin(project / ".hermes" / "plugins" / "tools", "nested", TOOL,
                 manifest="name: nested\nprovides_tools: [proj_tool]\n")
    (home / "config.yaml").write_text(f"plugins:\n  enabled: [nested]\nprojects:\n"
                                      f"  trusted: [{project / 'elsewhere'}]\n")
    env = {"HERMES_HOME": str(home), "HERMES_ENABLE_PROJECT_PLUGINS": "1"}
    status = Kernel(home, env=env, cwd=project, entry_points=False).boot().plugins["nested"]
    assert status.state == "untrusted" and f"hermes trust {project}`" in status.reason


def _config(tmp_path: Path, folders: list[Path | str]) -> object:
    home = tmp_path / "hermes-config"
    home.mkdir(exist_ok=True)
    (home / "config.yaml").write_text(yaml.safe_dump({"projects": {"trusted": [
        str(f) for f in folders]}}))
    return load_config(home, env={})

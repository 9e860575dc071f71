"""Skills shipped by plugins (``ctx.register_skill``): a real plugin folder in
$HERMES_HOME/plugins whose skill is installed into $HERMES_HOME/skills, upgraded while
untouched, and never overwritten once the user edited it."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from hermes_agent.cli.root import main
from hermes_agent.testing import make_kernel

from .conftest import call, skill_text, write_skill

PLUGIN = '''
from pathlib import Path


def register(ctx):
    ctx.register_skill("howto", Path(__file__).parent / "skill")
'''


def ship(home: Path, version: str, body: str, name: str = "weather-howto") -> Path:
    """(Re)install the plugin 'howto' shipping skill ``name`` at ``version``."""
    folder = home / "plugins" / "howto"
    (folder / "skill" / "references").mkdir(parents=True, exist_ok=True)
    (folder / "plugin.yaml").write_text("name: howto\nversion: 1.0.0\n")
    (folder / "__init__.py").write_text(textwrap.dedent(PLUGIN))
    (folder / "skill" / "SKILL.md").write_text(skill_text(
        name, description="Read weather alerts", body=body, version=version,
        metadata={"hermes": {"category": "weather"}}))
    (folder / "skill" / "references" / "codes.md").write_text(f"codes v{version}\n")
    (home / "config.yaml").write_text("plugins:\n  enabled: [howto]\n")
    return home / "skills" / "weather" / name


def boot(home: Path) -> Any:
    return make_kernel(home, env={"HERMES_HOME": str(home)}, builtins=True)


def hermes(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def manifest(home: Path) -> dict[str, Any]:
    return json.loads((home / "skills" / ".installed.json").read_text())["skills"]


def test_a_plugins_skill_is_installed_and_upgraded_while_untouched(home: Path) -> None:
    installed = ship(home, "1.0.0", "Use the v1 API.")
    kernel = boot(home)
    assert "howto:howto" in kernel.registered("skill")
    viewed = call(kernel, "skill_view", name="weather-howto")
    assert viewed["content"] == "Use the v1 API." and viewed["category"] == "weather"
    assert call(kernel, "skill_view", name="howto:howto") == viewed  # the original's address
    assert call(kernel, "skill_view", name="weather-howto",
                path="references/codes.md")["content"] == "codes v1.0.0\n"
    entry = manifest(home)["weather-howto"]
    assert entry["source"] == "plugin:howto:howto" and entry["version"] == "1.0.0"

    ship(home, "1.1.0", "Use the v2 API.")  # the plugin is upgraded; the copy is untouched
    kernel = boot(home)
    assert call(kernel, "skill_view", name="weather-howto")["content"] == "Use the v2 API."
    assert (installed / "references" / "codes.md").read_text() == "codes v1.1.0\n"
    assert manifest(home)["weather-howto"]["version"] == "1.1.0"


def test_a_users_edit_survives_a_reinstall(home: Path, capsys) -> None:
    installed = ship(home, "1.0.0", "Use the v1 API.")
    code, out, _ = hermes(capsys, "skills", "list")
    assert code == 0 and "weather-howto" in out and "plugin howto" in out
    skill_md = installed / "SKILL.md"
    edited = skill_md.read_text().replace("Use the v1 API.", "Use the v1 API. My own note.")
    skill_md.write_text(edited)

    ship(home, "2.0.0", "Use the v2 API.")  # reinstall with a new version
    code, out, _ = hermes(capsys, "skills", "list")
    assert code == 0 and "note: weather-howto: you edited" in out and "version 2.0.0" in out
    assert skill_md.read_text() == edited
    kernel = boot(home)
    assert call(kernel, "skill_view", name="weather-howto")["content"] == (
        "Use the v1 API. My own note.")
    code, out, _ = hermes(capsys, "skills", "view", "weather-howto")
    assert "My own note." in out

    # the user takes the new version: remove, then install the plugin's skill again
    code, out, _ = hermes(capsys, "skills", "remove", "weather-howto")
    assert code == 0 and "will not install it again" in out and not installed.exists()
    boot(home)  # a later start does not bring it back
    assert not installed.exists()
    code, out, err = hermes(capsys, "skills", "install", "howto:howto")
    assert code == 0, err
    assert "Use the v2 API." in skill_md.read_text()
    assert not manifest(home)["weather-howto"]["removed"]


def test_a_users_own_skill_of_the_same_name_wins(home: Path,
                                                 caplog: pytest.LogCaptureFixture) -> None:
    mine = write_skill(home, "personal", "weather-howto", body="Mine.")
    ship(home, "1.0.0", "Theirs.")
    kernel = boot(home)
    assert call(kernel, "skill_view", name="weather-howto")["content"] == "Mine."
    assert (mine / "SKILL.md").exists() and not (home / "skills" / "weather").exists()
    assert "your own skill 'weather-howto'" in caplog.text


def test_bundled_skills_are_installed_like_plugin_skills(kernel: Any, home: Path) -> None:
    listed = {r["name"]: r for r in call(kernel, "skills_list")["skills"]}
    assert {"git-commit-hygiene", "debugging-checklist", "writing-hermes-plugins"} <= set(listed)
    assert manifest(home)["git-commit-hygiene"]["source"] == "plugin:skills:git-commit-hygiene"
    ref = call(kernel, "skill_view", name="writing-hermes-plugins",
               path="references/plugin-yaml.md")
    assert "register_skill" in ref["content"]


def test_a_plugin_skill_that_is_a_lone_file_is_installed_alone(home: Path, tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "notes.md").write_text(skill_text("lone-file", body="Only me."))
    (package / "secret.py").write_text("KEY = 1\n")

    def register(ctx: Any) -> None:
        ctx.register_skill("lone", package / "notes.md")

    kernel = make_kernel(home, env={"HERMES_HOME": str(home)}, builtins=True, plugins=[register])
    assert call(kernel, "skill_view", name="lone-file")["files"] == []
    assert sorted(p.name for p in (home / "skills" / "register" / "lone-file").iterdir()) == [
        "SKILL.md"]


def test_restoring_a_removed_plugin_skill_never_overwrites_a_new_own_one(home: Path,
                                                                          capsys) -> None:
    installed = ship(home, "1.0.0", "Theirs.")
    assert hermes(capsys, "skills", "remove", "weather-howto")[0] == 0
    mine = write_skill(home, "personal", "weather-howto", body="Mine now.")
    code, _, err = hermes(capsys, "skills", "install", "howto:howto")
    assert code != 0 and "your own skill 'weather-howto'" in err
    assert "Mine now." in (mine / "SKILL.md").read_text() and not installed.exists()

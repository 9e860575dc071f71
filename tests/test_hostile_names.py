"""Names and texts a plugin's files or a value bring in, as a stranger could write them.

A name ending in a newline is not a name: Python's ``$`` also matches before a final newline,
so ``^name$`` patterns let ``"calc\\n"`` through (into .env as a second line, into folder
names, config keys, plugin names); every such pattern ends in ``\\Z``. And a manifest's text
holds no control characters: listings read manifests without importing any plugin, and an
escape sequence would rewrite what they show."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_agent import ConfigError, read_manifest
from hermes_agent.kits.files import set_env_values


def manifest_problems(tmp_path: Path, text: str) -> str:
    path = tmp_path / "plugin.yaml"
    path.write_text(text, encoding="utf-8")
    result = read_manifest(path)
    assert result.manifest is None, "the manifest was accepted"
    return "\n".join(result.error.problems)  # type: ignore[union-attr]


@pytest.mark.parametrize("field, text", [
    ("name", 'name: "calc\\n"\n'),
    ("requires_env", 'name: calc\nrequires_env: ["OPENAI_API_KEY\\n"]\n'),
    ("requires_env", 'name: calc\nrequires_env: [{name: "KEY\\n", secret: true}]\n'),
    ("cli_commands", 'name: calc\ncli_commands: {"calc\\n": ".cli:main"}\n'),
    ("cli_commands", 'name: calc\ncli_commands: {calc: ".cli:main\\n"}\n'),
])
def test_a_manifest_name_ending_in_a_newline_is_refused(tmp_path: Path, field: str,
                                                        text: str) -> None:
    assert field in manifest_problems(tmp_path, text)


def test_the_same_manifests_without_the_newline_load(tmp_path: Path) -> None:
    path = tmp_path / "plugin.yaml"
    path.write_text('name: calc\nrequires_env: [OPENAI_API_KEY]\n'
                    'cli_commands: {calc: ".cli:main"}\n', encoding="utf-8")
    manifest = read_manifest(path).manifest
    assert manifest is not None and manifest.name == "calc"
    assert [req.name for req in manifest.requires_env] == ["OPENAI_API_KEY"]


def test_an_env_value_ending_in_a_newline_is_not_written_bare(tmp_path: Path) -> None:
    env = tmp_path / ".env"
    with pytest.raises(ConfigError, match="newline"):
        set_env_values(env, {"API_KEY": "abc\n"})
    set_env_values(env, {"API_KEY": "abc"})
    assert env.read_text(encoding="utf-8").splitlines() == ["API_KEY=abc"]


def test_a_skill_name_ending_in_a_newline_is_refused(tmp_path: Path) -> None:
    from hermes_agent.testing import make_kernel

    skill = tmp_path / "SKILL.md"
    skill.write_text("---\nname: s\ndescription: d\n---\nbody\n", encoding="utf-8")
    kernel = make_kernel(tmp_path / "home", builtins=False)

    def register(ctx) -> None:  # type: ignore[no-untyped-def]
        ctx.register_skill("notes\n", skill)

    status = kernel.register_plugin(register, "skills-plugin")
    assert status.state == "failed" and "skill name" in status.reason



@pytest.mark.parametrize("text, field", [
    ('name: demo\ndescription: "Weather.\\e[2A\\e[2K"\n', "description"),
    ('name: demo\nversion: "1.0\\e[8m"\n', "version"),
    ('name: demo\nauthor: "me\\r"\n', "author"),
    ('name: demo\nrequires_env: [{name: K, description: "x\\e]8;;http://e\\a"}]\n',
     "requires_env.0.description"),
    ('name: demo\ncli_commands: {demo: {entry: ".cli:main", help: "h\\u202e"}}\n',
     "cli_commands.demo.help"),
    ('name: demo\nprovides_tools: ["run\\nshell"]\n', "provides_tools.0"),
])
def test_control_characters_in_a_manifest_are_refused(tmp_path: Path, text: str,
                                                      field: str) -> None:
    """`hermes plugins list` reads manifests without importing plugins: an escape sequence
    in one could rewrite what it shows."""
    assert f"{field}: holds control characters" in manifest_problems(tmp_path, text)


def test_descriptions_keep_their_newlines_and_tabs(tmp_path: Path) -> None:
    path = tmp_path / "plugin.yaml"
    path.write_text('name: demo\ndescription: "Two lines:\\n\\tindented"\n'
                    'config: {banner: "\\e[1mkept: the plugin\'s own defaults\\e[0m"}\n',
                    encoding="utf-8")
    manifest = read_manifest(path).manifest
    assert manifest is not None and manifest.description == "Two lines:\n\tindented"


def test_package_metadata_shown_for_a_plugin_loses_its_control_characters(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An entry-point plugin without plugin.yaml is described by its package's metadata."""
    from hermes_agent.discovery import discover

    site = tmp_path / "site"
    info = site / "shady_plugin-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: shady-plugin\nVersion: 1.0\n"
                                   "Summary: Weather \x1b[2A\x1b[2Kforecasts\nAuthor: me\x07\n",
                                   encoding="utf-8")
    (info / "entry_points.txt").write_text("[hermes_agent.plugins]\nshady = shady_plugin\n",
                                           encoding="utf-8")
    monkeypatch.syspath_prepend(str(site))
    found = discover(tmp_path / "home", {"HERMES_HOME": str(tmp_path / "home")})
    manifest = found.plugins["shady"].manifest
    assert manifest is not None and manifest.synthesized
    assert manifest.description == "Weather  [2A [2Kforecasts" and manifest.author == "me"

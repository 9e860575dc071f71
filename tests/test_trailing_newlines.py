"""A name ending in a newline is not a name. Python's ``$`` also matches before a final
newline, so ``^name$`` patterns let ``"calc\\n"`` through: into .env as a second line, into
folder names, config keys and plugin names. Every such pattern now ends in ``\\Z``."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_agent import ConfigError, read_manifest
from hermes_agent.api import set_env_values


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


"""docs/skills.md against the code: every frontmatter field in the fields table (and nothing
else), the example SKILL.md valid, every `hermes skills` command and option, the config keys,
the bundled skills and the index header as rendered."""

from __future__ import annotations

import re
from pathlib import Path

from hermes_agent.builtin_plugins.skills import BUNDLED
from hermes_agent.builtin_plugins.skills.cli import skills
from hermes_agent.builtin_plugins.skills.config_schema import SkillsSection
from hermes_agent.builtin_plugins.skills.index import DESCRIPTION_CHARS, HEADER
from hermes_agent.builtin_plugins.skills.schema import (MAX_DESCRIPTION, PLATFORMS, Conditions,
                                                        Frontmatter, Prerequisites, parse)

DOC = (Path(__file__).resolve().parents[2] / "docs" / "skills.md").read_text(encoding="utf-8")


def section(title: str) -> str:
    """From the heading ``title`` to the next heading of its level (code blocks skipped)."""
    level = title.split(" ", 1)[0] + " "
    lines = DOC[DOC.index(title):].splitlines()
    out, fenced = [lines[0]], False
    for line in lines[1:]:
        fenced = fenced != line.startswith("```")
        if not fenced and line.startswith(level):
            break
        out.append(line)
    return "\n".join(out)


def test_the_fields_table_documents_every_frontmatter_field() -> None:
    table = section("## The SKILL.md format")
    rows = [line.split("|") for line in table.splitlines() if line.startswith("| `")]
    documented = {row[1].strip().strip("`") for row in rows}
    fields = set(Frontmatter.model_fields) | set(Conditions.model_fields)
    assert documented == fields
    required = {row[1].strip().strip("`") for row in rows if row[2].strip() == "yes"}
    assert required == {n for n, f in Frontmatter.model_fields.items() if f.is_required()}
    for key in Prerequisites.model_fields:
        assert f"`{key}`" in table, key
    for platform in PLATFORMS:
        assert f"`{platform}`" in table
    assert f"{MAX_DESCRIPTION:,}" in table


def test_the_example_skill_is_valid() -> None:
    example = re.search(r"```markdown\n(.*?)```", DOC, re.S).group(1)
    front, conditions, body = parse(example)
    assert front.name == "deploy-check" and conditions.category == "devops"
    assert conditions.config[0].key == "deploy.cluster" and "## Procedure" in body


def test_every_command_and_option_is_documented() -> None:
    table = section("## `hermes skills`")
    for name, command in skills.commands.items():
        assert f"`hermes skills {name}" in table, name
        for param in command.params:
            for opt in param.opts:
                if opt.startswith("--"):
                    assert opt in table, f"{name} {opt}"


def test_config_keys_bundled_skills_and_the_index_are_documented() -> None:
    for key in SkillsSection.model_fields:
        assert f"`skills.{key}`" in DOC, key
    bundled = section("### Bundled skills")
    for folder in BUNDLED.iterdir():
        if (folder / "SKILL.md").is_file():
            assert f"`{folder.name}`" in bundled, folder.name
    assert HEADER.splitlines()[0] in DOC and HEADER.splitlines()[1][:60] in DOC
    assert f"longer than {DESCRIPTION_CHARS} characters" in DOC

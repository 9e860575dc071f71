"""The SKILL.md format: YAML frontmatter between ``---`` lines, then a markdown body.

:class:`Frontmatter` validates the header. The conditions that decide where a skill shows
(tags, category, related_skills, requires_toolsets, fallback_for_toolsets, config) may sit at
the top level or under ``metadata.hermes``; both are read and merged.
"""

from __future__ import annotations

import re
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}\Z")
CATEGORY = NAME
PLATFORMS = ("linux", "macos", "windows")
_PLATFORM_ALIASES = {"darwin": "macos", "mac": "macos", "osx": "macos", "win32": "windows",
                     "win": "windows"}
MAX_DESCRIPTION = 1024


class SkillFormatError(ValueError):
    """A SKILL.md that cannot be used; the message says what to fix."""


class Prerequisites(BaseModel):
    model_config = ConfigDict(extra="forbid")

    env_vars: list[str] = Field(default_factory=list)  # must be set (non-empty)
    commands: list[str] = Field(default_factory=list)  # must be on PATH


class ConfigSetting(BaseModel):
    """A config.yaml key the skill reads (shown by skill_view)."""

    model_config = ConfigDict(extra="allow")

    key: str
    description: str = ""
    default: Any = None


class Conditions(BaseModel):
    """The keys accepted both at the top level and under ``metadata.hermes``."""

    model_config = ConfigDict(extra="allow")

    tags: list[str] = Field(default_factory=list)
    category: str = ""
    related_skills: list[str] = Field(default_factory=list)
    requires_toolsets: list[str] = Field(default_factory=list)
    fallback_for_toolsets: list[str] = Field(default_factory=list)
    config: list[ConfigSetting] = Field(default_factory=list)

    @field_validator("category")
    @classmethod
    def _category(cls, value: str) -> str:
        if value and not CATEGORY.match(value):
            raise ValueError("category must use letters, digits, '-' and '_' (e.g. devops)")
        return value


class Frontmatter(Conditions):
    name: str
    description: str
    version: str = ""
    author: str = ""
    license: str = ""
    platforms: list[str] = Field(default_factory=list)  # empty: every platform
    prerequisites: Prerequisites = Field(default_factory=Prerequisites)
    dependencies: list[str] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not NAME.match(value):
            raise ValueError("name must be 1-64 letters, digits, '-' or '_' (kebab-case, "
                             "e.g. git-commit-hygiene)")
        return value

    @field_validator("description")
    @classmethod
    def _description(cls, value: str) -> str:
        value = " ".join(value.split())
        if not value:
            raise ValueError("description is empty; say in one sentence when to use the skill")
        if len(value) > MAX_DESCRIPTION:
            raise ValueError(f"description is {len(value)} characters; keep it under "
                             f"{MAX_DESCRIPTION} (details go in the body)")
        return value

    @field_validator("version", "author", "license", mode="before")
    @classmethod
    def _text(cls, value: Any) -> str:
        return "" if value is None else str(value)

    @field_validator("platforms", mode="before")
    @classmethod
    def _platforms(cls, value: Any) -> list[str]:
        items = [value] if isinstance(value, str) else list(value or [])
        out = []
        for item in items:
            name = _PLATFORM_ALIASES.get(str(item).lower(), str(item).lower())
            if name not in PLATFORMS:
                raise ValueError(f"unknown platform {item!r}; use {', '.join(PLATFORMS)}")
            out.append(name)
        return out

    def hermes(self) -> Conditions:
        """The conditions, top-level keys merged with ``metadata.hermes`` (lists joined)."""
        nested = self.metadata.get("hermes") or {}
        if not isinstance(nested, dict):
            raise SkillFormatError("metadata.hermes must be a mapping")
        inner = Conditions.model_validate(nested)
        merged: dict[str, Any] = {}
        for key in ("tags", "related_skills", "requires_toolsets", "fallback_for_toolsets"):
            merged[key] = list(dict.fromkeys([*getattr(self, key), *getattr(inner, key)]))
        merged["config"] = [*self.config, *inner.config]
        merged["category"] = self.category or inner.category
        return Conditions.model_validate(merged)


def split(text: str) -> tuple[dict[str, Any], str]:
    """The frontmatter mapping and the body of SKILL.md ``text``."""
    text = text.removeprefix("\ufeff")
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        raise SkillFormatError("SKILL.md must start with a '---' line opening its YAML "
                               "frontmatter (name, description, ...)")
    for index, line in enumerate(lines[1:], start=1):
        if line.strip() == "---":
            header, body = "".join(lines[1:index]), "".join(lines[index + 1:])
            break
    else:
        raise SkillFormatError("the frontmatter is not closed: add a '---' line after it")
    try:
        data = yaml.safe_load(header)
    except yaml.YAMLError as exc:
        raise SkillFormatError(f"the frontmatter is not valid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise SkillFormatError("the frontmatter must be a YAML mapping (name: ..., "
                               "description: ...)")
    return data, body


def parse(text: str) -> tuple[Frontmatter, Conditions, str]:
    """Validate SKILL.md ``text``: its frontmatter, merged conditions and body."""
    data, body = split(text)
    try:
        front = Frontmatter.model_validate(data)
        conditions = front.hermes()
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in err['loc']) or 'frontmatter'}: "
                             f"{err['msg']}" for err in exc.errors())
        raise SkillFormatError(f"invalid frontmatter: {problems}") from None
    if not body.strip():
        raise SkillFormatError("the body is empty: write the instructions below the "
                               "frontmatter")
    return front, conditions, body

"""Which skills fit a session, and the ``skills_index`` prompt layer that lists them.

A skill fits when the operating system is one of its ``platforms`` (none: any), every
prerequisite env var is set and command is on PATH, each ``requires_toolsets`` toolset has a
tool in the session, and no ``fallback_for_toolsets`` toolset does (a fallback only shows
when what it stands in for is missing). Skills named in ``skills.disabled`` never show.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from .catalog import Catalog, Skill

DESCRIPTION_CHARS = 160
HEADER = ("## Skills (mandatory)\n"
          "Before replying, scan the skills below. If one clearly matches your task, load it "
          "with skill_view(name) and follow its instructions; skill_view(name, path) opens a "
          "file it refers to.")


def current_platform() -> str:
    if sys.platform.startswith("darwin"):
        return "macos"
    if sys.platform.startswith(("win32", "cygwin")):
        return "windows"
    return "linux"


#: toolset name -> the tools it stands for (None: unknown toolset)
ToolsetTools = Callable[[str], "set[str]"]


def unfit_reason(skill: Skill, env: Mapping[str, str], *, platform: str | None = None,
                 tools: Iterable[str] | None = None,
                 toolset_tools: ToolsetTools | None = None) -> str:
    """Why ``skill`` does not fit ('' when it does). Toolsets are checked only when the
    session's ``tools`` are given."""
    front, cond = skill.front, skill.conditions
    here = platform or current_platform()
    if front.platforms and here not in front.platforms:
        return f"runs on {', '.join(front.platforms)}, not {here}"
    missing = [v for v in front.prerequisites.env_vars if not env.get(v)]
    if missing:
        return f"needs the environment variable(s) {', '.join(missing)}"
    path = env.get("PATH")
    absent = [c for c in front.prerequisites.commands if shutil.which(c, path=path) is None]
    if absent:
        return f"needs the command(s) {', '.join(absent)} on PATH"
    if tools is None or toolset_tools is None:
        return ""
    offered = set(tools)
    lacking = [t for t in cond.requires_toolsets if not toolset_tools(t) & offered]
    if lacking:
        return f"needs the toolset(s) {', '.join(lacking)}"
    present = [t for t in cond.fallback_for_toolsets if toolset_tools(t) & offered]
    if present:
        return f"is a fallback for {', '.join(present)}, which this session has"
    return ""


def _short(text: str) -> str:
    if len(text) <= DESCRIPTION_CHARS:
        return text
    return text[:DESCRIPTION_CHARS - 1].rstrip() + "…"


def render(skills: Iterable[Skill]) -> str:
    """The index text: skills grouped by category, both sorted; '' when there are none."""
    groups: dict[str, list[Skill]] = {}
    for skill in skills:
        groups.setdefault(skill.category or "general", []).append(skill)
    if not groups:
        return ""
    lines = [HEADER, "<available_skills>"]
    for category in sorted(groups):
        lines.append(f"  {category}:")
        lines.extend(f"    - {s.name}: {_short(s.description)}"
                     for s in sorted(groups[category], key=lambda s: s.name))
    lines.append("</available_skills>")
    return "\n".join(lines)


def fitting(catalog: Catalog, env: Mapping[str, str], tools: Iterable[str],
            toolset_tools: ToolsetTools, disabled: Iterable[str] = (),
            scan: Callable[[str], list[str]] | None = None, log: Any = None) -> list[Skill]:
    """The catalog's skills that fit the session (description scanned when ``scan`` is
    given: a flagged one is left out, it would reach the system prompt)."""
    off = set(disabled)
    tools = tuple(tools)
    out = []
    for skill in catalog.skills.values():
        if skill.name in off or unfit_reason(skill, env, tools=tools, toolset_tools=toolset_tools):
            continue
        findings = scan(skill.description) if scan is not None else []
        if findings:
            if log is not None:
                log.warning("skill %r left out of the prompt: its description looks like a "
                            "prompt injection (%s)", skill.name, ", ".join(findings))
            continue
        out.append(skill)
    return out

"""The ``skills_list``, ``skill_view`` and ``skill_manage`` tools (progressive disclosure:
names and descriptions, then a skill's instructions, then one of its files)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from hermes_agent import write_atomic
from hermes_agent.api import tool_error, tool_result

from .catalog import (MAX_SKILL_BYTES, SKILL_FILE, Catalog, UnsafePath, listed_files,
                      reference_file, skills_root)
from .index import unfit_reason
from .refscan import view_warning
from .installer import InstallError, remove
from .placement import Manifest
from .schema import CATEGORY, SkillFormatError, parse, split

MAX_FILE_BYTES = 200_000
MAX_OWN_SKILLS = 200  # skills not installed from a plugin or a source
ACTIONS = ("create", "edit", "patch", "delete")
Scanner = Callable[[str], list[str]]


def _text(args: Mapping[str, Any], key: str) -> str:
    value = args.get(key)
    return value if isinstance(value, str) else ""


def skills_list(catalog: Catalog, env: Mapping[str, str], args: Mapping[str, Any]) -> str:
    category = _text(args, "category").strip()
    rows = []
    for skill in sorted(catalog.skills.values(), key=lambda s: (s.category, s.name)):
        if category and skill.category != category:
            continue
        row = {"name": skill.name, "category": skill.category or "general",
               "description": skill.description}
        reason = unfit_reason(skill, env)
        if reason:
            row["unavailable"] = reason
        rows.append(row)
    result: dict[str, Any] = {"skills": rows, "count": len(rows),
                              "categories": [c or "general" for c in catalog.categories()]}
    if catalog.problems:
        result["skipped"] = [str(p) for p in catalog.problems]
    if category and not rows:
        result["hint"] = f"no skills in category {category!r}"
    return tool_result(result)


def skill_view(catalog: Catalog, env: Mapping[str, str], args: Mapping[str, Any],
               scan: Scanner | None = None) -> str:
    """A skill's instructions, or with ``path`` one of its files (``scan``: the injection
    scan, whose findings in a file come back as a ``warning``; reading is not blocked)."""
    name = _text(args, "name").strip()
    skill = catalog.skills.get(name)
    if skill is None:
        broken = [p for p in catalog.problems if p.name == name]
        if broken:
            return tool_error(f"skill {name!r} cannot be loaded: {broken[0].reason}")
        return tool_error(f"no skill named {name!r}; skills_list shows the installed ones")
    path = _text(args, "path").strip()
    if path:
        return _view_file(skill, path, scan)
    front, cond = skill.front, skill.conditions
    result: dict[str, Any] = {"name": skill.name, "category": skill.category or "general",
                              "description": front.description, "content": skill.body.strip(),
                              "files": listed_files(skill)}
    extras = {"version": front.version, "tags": cond.tags, "related_skills": cond.related_skills,
              "config": [c.model_dump(exclude_none=True) for c in cond.config]}
    result.update({k: v for k, v in extras.items() if v})
    reason = unfit_reason(skill, env)
    # SKILL.md written by other means than skill_manage or an install was never scanned
    injected = view_warning(f"{front.description}\n{skill.body}", scan) if scan else None
    warnings = [f"this skill {reason}" if reason else "",
                (injected or "").replace("this file", "this skill's SKILL.md")]
    if any(warnings):
        result["warning"] = "; ".join(w for w in warnings if w)
    return tool_result(result)


def _view_file(skill: Any, path: str, scan: Scanner | None) -> str:
    try:
        target = reference_file(skill, path)
    except UnsafePath as exc:
        return tool_error(str(exc))
    if not target.is_file():
        return tool_error(f"{skill.name} has no file {path!r}; its files: "
                          f"{', '.join(listed_files(skill)) or '(none)'}")
    if target.stat().st_size > MAX_FILE_BYTES:
        return tool_error(f"{path} is over {MAX_FILE_BYTES:,} bytes; read it with read_file "
                          f"at {target}")
    try:
        content = target.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        return tool_error(f"{path} is not a text file; use it from {target}")
    result = {"name": skill.name, "path": path, "content": content}
    warning = view_warning(content, scan)
    if warning:
        result["warning"] = warning
    return tool_result(result)


def frontmatter_text(data: Any) -> str:
    """Every key and value of the parsed frontmatter, one per line: YAML escapes
    (``"\\u0069gnore"``) and ``!!binary`` values only read as text once parsed, and the index
    and ``skill_view`` show the parsed values."""
    if isinstance(data, dict):
        return "\n".join(frontmatter_text(x) for pair in data.items() for x in pair)
    if isinstance(data, (list, tuple, set)):
        return "\n".join(frontmatter_text(x) for x in data)
    if isinstance(data, bytes):
        return data.decode("utf-8", errors="replace")
    return "" if data is None else str(data)


def _checked(content: str, name: str, scan: Scanner, limit: int = MAX_SKILL_BYTES) -> str | None:
    """The problem with new SKILL.md ``content`` for skill ``name`` (None: fine); ``limit``:
    its most bytes (``skills.max_skill_bytes``)."""
    size = len(content.encode("utf-8"))
    if size > limit:  # each later session could load all of it
        return (f"Nothing was written: SKILL.md would be {size:,} bytes, over the "
                f"{limit:,} limit (skills.max_skill_bytes); keep the instructions short and "
                "concrete")
    try:
        front, _, _ = parse(content)
    except SkillFormatError as exc:
        return f"Nothing was written: {exc}"
    if front.name != name:
        return (f"Nothing was written: the frontmatter's name is {front.name!r} but 'name' is "
                f"{name!r}; make them the same")
    findings = scan(content) or scan(frontmatter_text(split(content)[0]))
    if findings:
        return (f"Refused: the skill looks like a prompt injection ({', '.join(findings)}) and "
                f"would be followed as instructions. Nothing was written.")
    return None


def skill_manage(home: Path, catalog: Catalog, scan: Scanner, args: Mapping[str, Any],
                 limit: int = MAX_SKILL_BYTES) -> str:
    action, name = _text(args, "action"), _text(args, "name").strip()
    if action not in ACTIONS:
        return tool_error(f"'action' must be one of {', '.join(ACTIONS)}")
    if not name:
        return tool_error("'name' is required: the skill's name")
    skill = catalog.skills.get(name)
    if action == "create":
        if skill is not None or any(p.name == name for p in catalog.problems):
            return tool_error(f"a skill named {name!r} exists; use action='edit' or 'patch'")
        installed = Manifest(home).entries
        own = [s for s in catalog.skills if s not in installed]
        if len(own) >= MAX_OWN_SKILLS:  # each one is a line of every later system prompt
            return tool_error(f"there are {len(own)} skills of your own already, the most "
                              f"skill_manage keeps ({MAX_OWN_SKILLS}); every one is listed in "
                              "each session's prompt. Merge related skills (edit) and delete "
                              "ones no longer used before creating more.")
        content = _text(args, "content")
        problem = _checked(content, name, scan, limit)
        if problem:
            return tool_error(problem)
        _, cond, _ = parse(content)
        category = _text(args, "category").strip() or cond.category or "general"
        if not CATEGORY.match(category):
            return tool_error("'category' must use letters, digits, '-' and '_' (e.g. devops)")
        path = skills_root(home) / category / name / SKILL_FILE
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, content, durable=True)
        return tool_result(success=True, action="create", name=name, path=str(path))
    if skill is None:
        return tool_error(f"no skill named {name!r}; skills_list shows them "
                          "(action='create' makes a new one)")
    installed = Manifest(home).entries.get(name)
    # a plugin's skill, or one the user installed from a folder, git or an archive
    if installed is not None and not installed.removed:
        return tool_error(
            f"{name!r} was installed from {installed.source} and is not the agent's to "
            f"{action}: a change would persist under a name the user trusts (and stop its "
            f"updates). Create a new skill under another name instead, or ask the user "
            f"(`hermes skills remove {name}`, or editing {skill.folder / SKILL_FILE} by hand).")
    path = skill.folder / SKILL_FILE
    if action == "delete":
        try:
            return tool_result(success=True, action="delete", name=name,
                               message=remove(home, name))
        except InstallError as exc:
            return tool_error(str(exc))
    if action == "edit":
        content = _text(args, "content")
    else:
        old, new = _text(args, "old_string"), _text(args, "new_string")
        current = path.read_text(encoding="utf-8")
        count = current.count(old) if old else 0
        if count != 1:
            return tool_error(f"'old_string' must occur exactly once in {name}'s SKILL.md "
                              f"(found {count} times); include more surrounding text")
        content = current.replace(old, new, 1)
    problem = _checked(content, name, scan, limit)
    if problem:
        return tool_error(problem)
    write_atomic(path, content, durable=True)
    return tool_result(success=True, action=action, name=name, path=str(path))

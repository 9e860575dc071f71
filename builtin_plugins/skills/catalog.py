"""The skills under ``$HERMES_HOME/skills``: ``<category>/<name>/SKILL.md`` (or ``<name>/SKILL.md``
for an uncategorised skill). Folders whose name starts with '.' are hermes's own.

Each SKILL.md is parsed once per (mtime, size): a session start only stats the files. A file
that does not parse becomes a :class:`Problem` named after its folder, never an exception.
"""

from __future__ import annotations

import logging
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path

from .config_schema import MAX_SKILL_BYTES
from .schema import Conditions, Frontmatter, SkillFormatError, parse

log = logging.getLogger("hermes_agent.skills")

FOLDER = "skills"
SKILL_FILE = "SKILL.md"


@dataclass(frozen=True)
class Skill:
    name: str
    category: str  # "" when the skill sits directly under skills/
    folder: Path
    front: Frontmatter
    conditions: Conditions
    body: str

    @property
    def description(self) -> str:
        return self.front.description


@dataclass(frozen=True)
class Problem:
    """A SKILL.md that was skipped, named by its folder."""

    name: str
    path: Path
    reason: str

    def __str__(self) -> str:
        return f"skill {self.name!r} ({self.path}) skipped: {self.reason}"


@dataclass
class Catalog:
    skills: dict[str, Skill] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)

    def categories(self) -> list[str]:
        return sorted({s.category for s in self.skills.values()})


def skills_root(home: Path) -> Path:
    return Path(home) / FOLDER


def skill_files(root: Path) -> list[tuple[str, Path]]:
    """(category, SKILL.md path) of every skill folder under ``root``, sorted."""
    found: list[tuple[str, Path]] = []
    try:
        tops = sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))
    except OSError:
        return found
    for top in tops:
        if (top / SKILL_FILE).is_file():
            found.append(("", top / SKILL_FILE))
            continue
        try:
            inner = sorted(p for p in top.iterdir() if p.is_dir() and not p.name.startswith("."))
        except OSError:
            continue
        found.extend((top.name, p / SKILL_FILE) for p in inner if (p / SKILL_FILE).is_file())
    return found


_parsed: dict[Path, tuple[tuple[int, int], Skill | Problem]] = {}
_reported: set[Problem] = set()
_lock = threading.Lock()


def read_skill(path: Path, category: str) -> Skill | Problem:
    """The skill at ``path`` (a SKILL.md), parsed again only when it changed."""
    folder = path.parent
    try:
        stat = path.stat()
    except OSError as exc:
        return Problem(folder.name, path, f"cannot be read ({exc.strerror})")
    key = (stat.st_mtime_ns, stat.st_size)
    with _lock:
        cached = _parsed.get(path)
    if cached is not None and cached[0] == key:
        result = cached[1]
        # the same file moved to another category still needs its category right
        if isinstance(result, Skill) and result.category == category:
            return result
    result = _load(path, category, stat.st_size)
    with _lock:
        _parsed[path] = (key, result)
    return result


def _load(path: Path, category: str, size: int) -> Skill | Problem:
    folder = path.parent
    if size > MAX_SKILL_BYTES:
        return Problem(folder.name, path, f"SKILL.md is {size:,} bytes, over the "
                       f"{MAX_SKILL_BYTES:,} limit; move details into reference files")
    try:
        text = path.read_text(encoding="utf-8")
        front, conditions, body = parse(text)
    except UnicodeDecodeError:
        return Problem(folder.name, path, "SKILL.md is not UTF-8 text")
    except OSError as exc:
        return Problem(folder.name, path, f"cannot be read ({exc.strerror})")
    except SkillFormatError as exc:
        return Problem(folder.name, path, str(exc))
    return Skill(front.name, category, folder, front, conditions, body)


def load_catalog(home: Path) -> Catalog:
    """Every skill under ``$HERMES_HOME/skills``; the first of two with one name wins."""
    catalog = Catalog()
    for category, path in skill_files(skills_root(home)):
        result = read_skill(path, category)
        if isinstance(result, Problem):
            catalog.problems.append(result)
            continue
        other = catalog.skills.get(result.name)
        if other is not None:
            catalog.problems.append(Problem(result.name, path, (
                f"another skill named {result.name!r} is at {other.folder}; rename one "
                f"(the 'name' in its frontmatter)")))
            continue
        catalog.skills[result.name] = result
    for problem in catalog.problems:
        if problem not in _reported:  # once per process, not at every session start
            _reported.add(problem)
            log.warning("%s", problem)
    return catalog


class UnsafePath(ValueError):
    """A reference path that leaves the skill's folder."""


def reference_file(skill: Skill, relative: str) -> Path:
    """The file ``relative`` inside ``skill``'s folder, refusing anything that leaves it
    (absolute paths, '..', symlinks pointing outside)."""
    if not relative or "\0" in relative:
        raise UnsafePath("'path' must be a file inside the skill's folder, e.g. "
                         "references/api.md")
    candidate = Path(relative)
    if candidate.is_absolute() or relative.startswith(("/", "\\")) or candidate.drive:
        raise UnsafePath(f"{relative!r} is absolute; give a path relative to the skill's "
                         "folder (see 'files' in skill_view's result)")
    if ".." in Path(relative.replace("\\", "/")).parts:
        raise UnsafePath(f"{relative!r} leaves the skill's folder; only its own files can be "
                         "read")
    base = skill.folder.resolve()
    target = (base / candidate).resolve()
    if target != base and base not in target.parents:
        raise UnsafePath(f"{relative!r} resolves outside the skill's folder (a symlink?); "
                         "only its own files can be read")
    return target


def listed_files(skill: Skill, limit: int = 50) -> list[str]:
    """The skill's other files (relative paths, sorted), symlinks and hidden files left out."""
    out: list[str] = []
    for dirpath, dirnames, filenames in os.walk(skill.folder):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".")
                             and not os.path.islink(os.path.join(dirpath, d)))
        for name in sorted(filenames):
            full = Path(dirpath) / name
            if name.startswith(".") or full.is_symlink():
                continue
            rel = full.relative_to(skill.folder).as_posix()
            if rel != SKILL_FILE:
                out.append(rel)
            if len(out) >= limit:
                return out
    return out

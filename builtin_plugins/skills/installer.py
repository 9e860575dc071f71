"""Installing skills from a source and removing them (``hermes skills install|remove``).

Everything a source holds is fetched into a hidden folder under ``skills/``, then every
skill in it is validated (frontmatter, injection scan of SKILL.md and of its reference
files, name clashes); only when all pass is
any of them placed, so a bad source leaves ``skills/`` as it was.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from hermes_agent import private_dir

from .catalog import SKILL_FILE, load_catalog, skills_root
from .placement import Installed, Manifest, place, remove_tree, tree_hash
from .refscan import injected_references
from .schema import CATEGORY, Frontmatter, SkillFormatError, parse
from .sources import SourceError, fetch

Scanner = Callable[[str], list[str]]
MAX_DEPTH = 3


class InstallError(ValueError):
    """Nothing was installed; the message says why and what to do."""


@dataclass
class Candidate:
    tree: Path
    front: Frontmatter
    category: str


def find_skills(root: Path) -> list[Path]:
    """The folders holding a SKILL.md: ``root`` itself, else those up to 3 levels below."""
    if (root / SKILL_FILE).is_file():
        return [root]
    found = []
    for path in sorted(root.rglob(SKILL_FILE)):
        rel = path.parent.relative_to(root)
        if len(rel.parts) <= MAX_DEPTH and not any(p.startswith(".") for p in rel.parts):
            found.append(path.parent)
    return found


def check(tree: Path, category: str | None, scan: Scanner) -> Candidate:
    label = tree.name
    try:
        text = (tree / SKILL_FILE).read_text(encoding="utf-8")
        front, conditions, _ = parse(text)
    except UnicodeDecodeError:
        raise InstallError(f"{label}/SKILL.md is not UTF-8 text") from None
    except SkillFormatError as exc:
        raise InstallError(f"{label}/SKILL.md: {exc}") from None
    findings = scan(text)
    if findings:
        raise InstallError(f"{front.name}: SKILL.md looks like a prompt injection "
                           f"({', '.join(findings)}); not installed")
    flagged = injected_references(tree, scan)
    if flagged:
        files = "; ".join(f"{rel} ({', '.join(found)})" for rel, found in flagged.items())
        raise InstallError(f"{front.name}: its reference files look like a prompt injection "
                           f"({files}); not installed. Remove or fix those files in the source")
    chosen = category or conditions.category or "general"
    if not CATEGORY.match(chosen):
        raise InstallError(f"category {chosen!r} must use letters, digits, '-' and '_'")
    return Candidate(tree, front, chosen)


def install(home: Path, source: str, scan: Scanner, *, category: str | None = None,
            force: bool = False) -> list[str]:
    """Install every skill ``source`` holds; the names installed (raises InstallError)."""
    root = skills_root(home)
    private_dir(root)
    staging = Path(tempfile.mkdtemp(prefix=".install-", dir=root))
    try:
        try:
            fetched, recorded = fetch(source, staging)
        except SourceError as exc:
            raise InstallError(str(exc)) from None
        trees = find_skills(fetched)
        if not trees:
            raise InstallError(f"{source} holds no SKILL.md (a skill is a folder with a "
                               "SKILL.md, see docs/skills.md)")
        candidates = [check(tree, category, scan) for tree in trees]
        names = [c.front.name for c in candidates]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise InstallError(f"{source} holds more than one skill named {', '.join(twice)}")
        catalog = load_catalog(home)
        clashes = [n for n in names if n in catalog.skills]
        if clashes and not force:
            raise InstallError(f"already installed: {', '.join(clashes)}. Use --force to "
                               "replace, or `hermes skills remove NAME` first")
        manifest = Manifest(home)
        for cand in candidates:
            existing = catalog.skills.get(cand.front.name)
            dest = existing.folder if existing else root / cand.category / cand.front.name
            place(cand.tree, dest)
            manifest.entries[cand.front.name] = Installed(
                recorded, dest.relative_to(root).as_posix(), tree_hash(dest),
                cand.front.version)
        manifest.save()
        return names
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def remove(home: Path, name: str) -> str:
    """Delete the skill ``name``; a plugin's skill is remembered as removed so it is not
    installed again. Returns what was done (raises InstallError)."""
    catalog = load_catalog(home)
    skill = catalog.skills.get(name)
    manifest = Manifest(home)
    entry = manifest.entries.get(name)
    folder = skill.folder if skill else None
    if folder is None:
        broken = [p for p in catalog.problems if p.name == name]
        folder = broken[0].path.parent if broken else None
    if folder is None:
        raise InstallError(f"no skill named {name!r}; `hermes skills list` shows them")
    remove_tree(folder, skills_root(home))
    if entry is not None and entry.shipped:
        entry.removed = True
        manifest.save()
        return (f"removed {name}; its plugin ({entry.source.split(':')[1]}) will not install "
                f"it again (`hermes skills install {entry.source[7:]}` restores it)")
    if entry is not None:
        del manifest.entries[name]
        manifest.save()
    return f"removed {name} ({folder})"

"""Skills shipped by plugins (``ctx.register_skill``, in ``kernel.registered("skill")``), installed into
``$HERMES_HOME/skills/<category>/<name>`` (category: the frontmatter's, else the plugin's
name).

A new skill is copied; an installed copy the user has not touched is updated when the plugin
ships a different one; a copy the user edited is kept and reported (its upgrade waits); a
user's own skill of the same name wins. Runs when skills are first used in a process, and
again only when a shipped SKILL.md or the manifest changes.
"""

from __future__ import annotations

import logging
import shutil
import tempfile
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .catalog import SKILL_FILE, load_catalog, skills_root
from .placement import Installed, Manifest, place, skill_source_folder, tree_hash
from .schema import SkillFormatError, parse

log = logging.getLogger("hermes_agent.skills")


@dataclass
class SyncReport:
    installed: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)  # user-modified copies left alone
    skipped: list[str] = field(default_factory=list)  # conflicts and invalid shipped skills

    def notes(self) -> list[str]:
        return [*self.kept, *self.skipped]


@contextmanager
def source_tree(skill_md: Path) -> Iterator[Path]:
    """The folder to install for a registered SKILL.md (a temporary one holding just that
    file when it is not alone in its folder)."""
    folder = skill_source_folder(skill_md)
    if folder is not None:
        yield folder
        return
    temp = Path(tempfile.mkdtemp(prefix="hermes-skill-"))
    try:
        shutil.copyfile(skill_md, temp / SKILL_FILE)
        yield temp
    finally:
        shutil.rmtree(temp, ignore_errors=True)


def install_shipped(home: Path, key: str, skill_md: Path, plugin: str, manifest: Manifest,
                    report: SyncReport, *, restore: bool = False) -> None:
    """Install or update one shipped skill (``key`` is ``<plugin>:<name>``)."""
    source = f"plugin:{key}"
    root = skills_root(home)
    with source_tree(skill_md) as tree:
        try:
            front, conditions, _ = parse((tree / SKILL_FILE).read_text(encoding="utf-8"))
        except (SkillFormatError, OSError, UnicodeDecodeError) as exc:
            report.skipped.append(f"{key}: the plugin's SKILL.md is invalid ({exc}); tell "
                                  f"the plugin's author")
            return
        name = front.name
        entry = manifest.entries.get(name)
        if entry is not None and entry.source != source:
            if not entry.shipped or entry.removed:
                report.skipped.append(f"{key}: a skill named {name!r} was installed from "
                                      f"{entry.source}; it is kept")
            else:
                report.skipped.append(f"{key}: {entry.source[7:]} ships a skill named "
                                      f"{name!r} too; the first one is kept")
            return
        if entry is not None and entry.removed and not restore:
            return
        new_hash = tree_hash(tree)
        folder = f"{conditions.category or plugin}/{name}"
        if entry is None or entry.removed:
            existing = load_catalog(home).skills.get(name)
            if existing is not None:
                report.skipped.append(f"{key}: your own skill {name!r} ({existing.folder}) "
                                      f"is kept; the plugin's is not installed")
                return
            place(tree, root / folder)
            manifest.entries[name] = Installed(source, folder, new_hash, front.version)
            report.installed.append(name)
            return
        dest = root / entry.folder
        if not (dest / SKILL_FILE).is_file():
            place(tree, dest)  # deleted by hand: back as shipped
            manifest.entries[name] = Installed(source, entry.folder, new_hash, front.version)
            report.installed.append(name)
            return
        if new_hash == entry.hash:
            return
        if tree_hash(dest) != entry.hash:
            report.kept.append(f"{name}: you edited {dest / SKILL_FILE}; your copy is kept "
                               f"(plugin {plugin} ships version {front.version or '?'}; "
                               f"`hermes skills remove {name}` then `hermes skills install "
                               f"{key}` takes it)")
            return
        place(tree, dest)
        manifest.entries[name] = Installed(source, entry.folder, new_hash, front.version)
        report.updated.append(name)


_memo: dict[Path, tuple[Any, SyncReport]] = {}
_lock = threading.Lock()


def _signature(home: Path, shipped: list[Any]) -> tuple[Any, ...]:
    def stamp(path: Path) -> tuple[int, int]:
        try:
            st = path.stat()
            return st.st_mtime_ns, st.st_size
        except OSError:
            return 0, 0
    return (stamp(skills_root(home) / ".installed.json"),
            tuple((s.name, str(s.path), stamp(s.path)) for s in shipped))


def sync_shipped(home: Path, shipped: Iterable[Any]) -> SyncReport:
    """Install the plugins' skills (``kernel.registered("skill").values()``) into ``home``."""
    items = sorted(shipped, key=lambda s: s.name)
    home = Path(home)
    with _lock:
        signature = _signature(home, items)
        memo = _memo.get(home)
        if memo is not None and memo[0] == signature:
            return memo[1]
        manifest = Manifest(home)
        report = SyncReport()
        for item in items:
            try:
                install_shipped(home, item.name, Path(item.path), item.plugin, manifest, report)
            except OSError as exc:
                report.skipped.append(f"{item.name}: could not be installed ({exc})")
        if report.installed or report.updated:
            manifest.save()
        for note in report.notes():
            log.warning("skills: %s", note)
        _memo[home] = (_signature(home, items), report)
        return report

"""`hermes skills list | view | install | remove`: the skills in $HERMES_HOME/skills."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, NoReturn

import click
from hermes_agent.kits.text import ellipsize, plural, table
from hermes_agent.kits.cli import ListingGroup, cli_kernel

from . import ScanUnavailable, Skills
from .catalog import UnsafePath, listed_files, reference_file
from .index import unfit_reason
from .installer import InstallError, install as install_source, remove as remove_skill
from .placement import Manifest
from .shipped import SyncReport, install_shipped


def _fail(message: str) -> NoReturn:
    raise click.ClickException(message)  # printed with URL credentials masked, exit code 1


def _source_label(entry: Any) -> str:
    if entry is None:
        return "yours"
    kind, _, rest = entry.source.partition(":")
    return f"plugin {rest.split(':')[0]}" if kind == "plugin" else kind


@click.group(cls=ListingGroup, default="list")
def skills() -> None:
    """Installed skills: reusable procedures the agent loads with skill_view."""


@skills.command("list")
@click.option("--category", help="Only skills of this category.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def list_(category: str | None, as_json: bool) -> None:
    """Every installed skill, where it came from, and whether it fits this machine."""
    kernel = cli_kernel()
    manager = Skills(kernel)
    notes = manager.sync().notes()
    catalog = manager.catalog()
    manifest = Manifest(Path(kernel.home))
    rows = []
    for skill in sorted(catalog.skills.values(), key=lambda s: (s.category, s.name)):
        if category and skill.category != category:
            continue
        rows.append({"name": skill.name, "category": skill.category or "general",
                     "source": _source_label(manifest.entries.get(skill.name)),
                     "description": skill.description,
                     "unavailable": unfit_reason(skill, kernel.env)})
    problems = [str(p) for p in catalog.problems]
    if as_json:
        click.echo(json.dumps({"skills": rows, "skipped": problems, "notes": notes}, indent=2))
        return
    if rows:
        lines = table(["NAME", "CATEGORY", "SOURCE", "DESCRIPTION"],
                      [[r["name"], r["category"], r["source"],
                        ellipsize(r["description"], 60) + (
                            f" (unavailable: {r['unavailable']})" if r["unavailable"] else "")]
                       for r in rows])
        click.echo("\n".join(lines))
    click.echo(f"{plural(len(rows), 'skill')} in {Path(kernel.home) / 'skills'}")
    for problem in problems:
        click.echo(f"skipped: {problem}")
    for note in notes:
        click.echo(f"note: {note}")


@skills.command()
@click.argument("name")
@click.argument("path", required=False)
def view(name: str, path: str | None) -> None:
    """A skill's SKILL.md, or PATH: one of its files."""
    catalog = Skills(cli_kernel()).catalog()
    skill = catalog.skills.get(name)
    if skill is None:
        broken = [p for p in catalog.problems if p.name == name]
        _fail(str(broken[0]) if broken else f"no skill named {name!r}; `hermes skills list` "
              "shows them")
    if path:
        try:
            target = reference_file(skill, path)
        except UnsafePath as exc:
            _fail(str(exc))
        if not target.is_file():
            _fail(f"{name} has no file {path!r}")
        click.echo(target.read_text(encoding="utf-8", errors="replace"), nl=False)
        return
    click.echo((skill.folder / "SKILL.md").read_text(encoding="utf-8"), nl=False)
    files = listed_files(skill)
    if files:
        click.echo(f"\nFiles: {', '.join(files)}", err=True)


@skills.command()
@click.argument("source")
@click.option("--category", help="Category folder to install into (default: the skill's "
              "own, else general).")
@click.option("--force", is_flag=True, help="Replace installed skills of the same name.")
def install(source: str, category: str | None, force: bool) -> None:
    """Install skills from SOURCE: a folder, a git URL, a .zip/.tar.gz archive, or
    PLUGIN:NAME (a plugin's skill you removed)."""
    kernel = cli_kernel()
    manager = Skills(kernel)
    home = Path(kernel.home)
    shipped = kernel.registered("skill").get(source)
    if shipped is not None:
        manifest = Manifest(home)
        report = SyncReport()
        install_shipped(home, source, Path(shipped.path), shipped.plugin, manifest, report,
                        restore=True)
        if not (report.installed or report.updated):
            _fail("; ".join(report.notes()) or f"{source} is installed and unchanged")
        manifest.save()
        click.echo(f"installed {', '.join(report.installed + report.updated)}")
        return
    try:
        names = install_source(home, source, manager.scan, category=category, force=force)
    except (InstallError, ScanUnavailable) as exc:
        _fail(f"{exc}. Nothing was installed.")
    click.echo(f"installed {plural(len(names), 'skill')}: {', '.join(names)}")


@skills.command()
@click.argument("name")
def remove(name: str) -> None:
    """Delete the skill NAME from $HERMES_HOME/skills."""
    kernel = cli_kernel()
    Skills(kernel).catalog()
    try:
        click.echo(remove_skill(Path(kernel.home), name))
    except InstallError as exc:
        _fail(str(exc))

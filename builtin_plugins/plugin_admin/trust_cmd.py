"""`hermes trust [PATH]`, `hermes trust --list`, `hermes trust --revoke PATH`: the folders
whose context files are instructions and whose project plugins may load (``projects.trusted``
in config.yaml, docs/projects.md). Writes go through the kernel's validated config writer."""

from __future__ import annotations

import os
from pathlib import Path

import click
from hermes_agent import ConfigError, ProjectTrust, hermes_home, load_config


def _trust() -> ProjectTrust:
    try:
        return ProjectTrust(load_config(hermes_home()), os.environ)
    except ConfigError as exc:
        raise click.ClickException(f"{exc}; fix config.yaml first (`hermes config edit`)") from exc


@click.command("trust")
@click.argument("path", required=False, type=click.Path(file_okay=False, path_type=Path))
@click.option("--list", "show", is_flag=True, help="List the trusted folders.")
@click.option("--revoke", metavar="PATH", type=click.Path(file_okay=False, path_type=Path),
              help="Stop trusting PATH.")
def trust(path: Path | None, show: bool, revoke: Path | None) -> None:
    """Trust a project folder (default: this project, the git root or the working folder):
    its context files (AGENTS.md, .hermes.md, CLAUDE.md, .cursorrules) become instructions
    and its project plugins may load. A folder trusts its subfolders."""
    if sum((path is not None, show, revoke is not None)) > 1:
        raise click.UsageError("give one of PATH, --list or --revoke PATH")
    trust = _trust()
    if show:
        _list(trust)
    elif revoke is not None:
        _revoke(trust, revoke)
    else:
        _add(trust, path)


def _add(trust: ProjectTrust, path: Path | None) -> None:
    target = trust.folder(path) if path is not None else trust.folder_to_trust(Path.cwd())
    if path is None and trust.never_implicit(target):
        what = "your home folder" if target.parent != target else "/"
        raise click.ClickException(
            f"{target} is {what}, which hermes never trusts by itself; to trust that folder "
            f"(alone, not its subfolders) name it: `hermes trust {target}`")
    covering = next((f for f in trust.folders if f != target and trust.covers(target)
                     and f in target.parents), None)
    if covering is not None:
        click.echo(f"{target} is trusted already, through {covering}")
        return
    try:
        added = trust.add(target)
    except (ConfigError, NotADirectoryError) as exc:
        raise click.ClickException(f"not saved; {exc}") from exc
    if not added:
        click.echo(f"{target} is trusted already")
        return
    alone = " (that folder alone: its subfolders are not trusted through it)" \
        if trust.never_implicit(target) else ""
    click.echo(f"trusted {target}{alone} (saved to {trust.config.path}): its context files are "
               "instructions and its project plugins may load; `hermes trust --revoke "
               f"{target}` undoes it")


def _list(trust: ProjectTrust) -> None:
    folders = trust.folders
    if not folders:
        click.echo("No folder is trusted. `hermes trust` in a project trusts it "
                   f"(projects.trusted in {trust.config.path}).")
        return
    for folder in folders:
        notes = []
        if trust.never_implicit(folder):
            notes.append("this folder alone, not its subfolders")
        if not folder.is_dir():
            notes.append("missing")
        click.echo(f"{folder}" + (f"  ({'; '.join(notes)})" if notes else ""))


def _revoke(trust: ProjectTrust, path: Path) -> None:
    target = trust.folder(path)
    try:
        gone = trust.revoke(target)
    except ConfigError as exc:
        raise click.ClickException(f"not saved; {exc}") from exc
    if gone:
        click.echo(f"{target} is no longer trusted (removed from {trust.config.path})")
        return
    covering = next((f for f in trust.folders if f in target.parents), None)
    if covering is not None and trust.covers(target):
        raise click.ClickException(f"{target} is not listed itself: it is trusted through "
                                   f"{covering}; `hermes trust --revoke {covering}` revokes that")
    raise click.ClickException(f"{target} is not trusted; `hermes trust --list` shows the "
                               "trusted folders")

"""``hermes checkpoints list|diff|restore|prune`` and the chat's ``/rollback [N]``.

Checkpoints are numbered from the newest: 1 is the state before the latest turn that
changed files, 2 the one before, and so on.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from hermes_agent.kits.cli import ListingGroup, cli_kernel, confirm_at_terminal
from hermes_agent.kits.text import plural, table

from .shadow import Checkpoint, ShadowRepo

if TYPE_CHECKING:
    from hermes_agent import Kernel


def workspace_of(kernel: "Kernel", folder: Path) -> Path:
    """The sandbox's workspace for ``folder``; a folder with none has no checkpoints."""
    from ..sandbox.policy import policy_for

    workspace = policy_for(kernel.config, folder, Path(kernel.home)).workspace
    if workspace is None:
        raise click.ClickException(f"{folder} is not a workspace (the home folder, / and "
                                   "system folders never are), so it has no checkpoints; "
                                   "cd into a project folder")
    return workspace


def repo_for(kernel: "Kernel", folder: Path) -> ShadowRepo:
    from .manager import Checkpointer

    return Checkpointer(kernel).repo(workspace_of(kernel, folder))


def listing(found: list[Checkpoint]) -> str:
    rows = [(str(n), time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(c.created)), c.tool,
             c.session_id or "-", str(c.files), c.short) for n, c in enumerate(found, 1)]
    return "\n".join(table(("N", "TAKEN", "BEFORE", "SESSION", "FILES", "COMMIT"), rows))


def pick(found: list[Checkpoint], number: int) -> Checkpoint:
    if not found:
        raise click.ClickException("this workspace has no checkpoints yet: one is taken "
                                   "before the first file change of each agent turn")
    if not 1 <= number <= len(found):
        raise click.ClickException(f"there is no checkpoint {number}: this workspace has "
                                   f"{plural(len(found), 'checkpoint')} (1 is the newest)")
    return found[number - 1]


def restored(repo: ShadowRepo, checkpoint: Checkpoint) -> str:
    paths = repo.restore(checkpoint.commit)
    if not paths:
        return f"Nothing to restore: the workspace already matches checkpoint {checkpoint.short}."
    return (f"Restored {plural(len(paths), 'file')} as they were at checkpoint "
            f"{checkpoint.short}. The state before the restore is checkpoint 1 now "
            "(undo with the same command and 1).")


@click.group(name="checkpoints", cls=ListingGroup)
def checkpoints() -> None:
    """Snapshots of the workspace taken before the agent changed files (docs/checkpoints.md)."""


@checkpoints.command(name="list")
@click.option("--all", "every", is_flag=True, help="Every workspace that has checkpoints.")
def list_(every: bool) -> None:
    """The current folder's checkpoints, the newest first."""
    kernel = cli_kernel(boot=False)
    if every:
        from .manager import Checkpointer, workspaces

        for workspace in workspaces(Path(kernel.home)):
            count = len(Checkpointer(kernel).repo(workspace).checkpoints())
            click.echo(f"{workspace}  {plural(count, 'checkpoint')}")
        return
    found = repo_for(kernel, Path.cwd()).checkpoints()
    click.echo(listing(found) if found else "No checkpoints of this workspace yet.")


@checkpoints.command()
@click.argument("number", type=int, default=1)
@click.option("--full", is_flag=True, help="The whole diff, not only the files.")
def diff(number: int, full: bool) -> None:
    """What restoring checkpoint NUMBER (1 = the newest) would change."""
    repo = repo_for(cli_kernel(boot=False), Path.cwd())
    text = repo.diff(pick(repo.checkpoints(), number).commit, stat=not full)
    click.echo(text.rstrip() or "No difference: the workspace matches that checkpoint.")


@checkpoints.command()
@click.argument("number", type=int, default=1)
@click.option("--yes", is_flag=True, help="Restore without asking.")
def restore(number: int, yes: bool) -> None:
    """Put the workspace's files back as they were at checkpoint NUMBER (1 = the newest)."""
    repo = repo_for(cli_kernel(boot=False), Path.cwd())
    checkpoint = pick(repo.checkpoints(), number)
    change = repo.diff(checkpoint.commit).rstrip()
    if not change:
        click.echo("Nothing to restore: the workspace already matches that checkpoint.")
        return
    click.echo(change)
    if yes or confirm_at_terminal("Restore these files?", "run it again with --yes"):
        click.echo(restored(repo, checkpoint))


@checkpoints.command()
@click.option("--keep", type=int, default=None,
              help="How many to keep (default: checkpoints.max_snapshots).")
def prune(keep: int | None) -> None:
    """Drop the oldest checkpoints of the current folder's workspace."""
    kernel = cli_kernel(boot=False)
    repo = repo_for(kernel, Path.cwd())
    if keep is None:
        keep = int(kernel.config.get("checkpoints.max_snapshots") or 50)
    dropped = repo.prune(keep) if keep > 0 else _drop_all(repo)
    click.echo(f"Dropped {plural(dropped, 'checkpoint')}.")


def _drop_all(repo: ShadowRepo) -> int:
    import shutil

    count = len(repo.checkpoints())
    shutil.rmtree(repo.git_dir, ignore_errors=True)
    return count


def rollback_command(kernel: "Kernel") -> Any:
    """The chat's ``/rollback [N] [yes]``: no N lists the checkpoints; N shows what would
    change and asks before restoring."""

    def rollback(raw_args: str) -> str:
        words = raw_args.split()
        try:
            repo = repo_for(kernel, Path(kernel.cwd) if kernel.cwd else Path.cwd())
            found = repo.checkpoints()
            if not words:
                if not found:
                    return "No checkpoints of this workspace yet."
                return listing(found) + "\n/rollback N restores checkpoint N."
            if not words[0].isdigit():
                return "Usage: /rollback [N] (N from the list /rollback prints; 1 is the newest)"
            checkpoint = pick(found, int(words[0]))
            change = repo.diff(checkpoint.commit).rstrip()
            if not change:
                return "Nothing to restore: the workspace already matches that checkpoint."
            if words[1:2] != ["yes"]:
                print(change)
                try:
                    answer = input("Restore these files? [y/N] ")
                except EOFError:
                    answer = ""
                if answer.strip().lower() not in ("y", "yes"):
                    return "Nothing was restored."
            return restored(repo, checkpoint)
        except click.ClickException as exc:
            return exc.message

    return rollback

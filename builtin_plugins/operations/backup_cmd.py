"""``hermes backup [-o PATH] [--include-secrets]`` and ``hermes restore ARCHIVE [--force]``.
Neither builds a kernel: they work on the files of ``$HERMES_HOME`` (docs/operations.md)."""

from __future__ import annotations

import time
from pathlib import Path

import click
from hermes_agent import hermes_home


def _size(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return str(n)


def _gateway_pid(home: Path) -> int | None:
    import json

    from hermes_agent.kits.files import pid_alive

    try:
        state = json.loads((home / "gateway" / "state.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    pid = state.get("pid") if isinstance(state, dict) else None
    return pid if pid_alive(pid) else None


def _provider_paths(home: Path) -> list[Path]:
    """What the memory providers in use keep outside the home (``backup_paths()``, see
    docs/memory.md): existing absolute paths, not inside the home. A kernel that cannot boot
    (an invalid config.yaml) gives none, with a warning: the home is archived all the same."""
    from hermes_agent import HermesError
    from hermes_agent.kits.cli import cli_kernel

    try:
        kernel = cli_kernel()
        slots = kernel.slots
        names = ["builtin", slots.selection("memory", kernel.config)]
        installed = slots.providers.get("memory", {})
        providers = [installed[n].obj for n in dict.fromkeys(names) if n in installed]
    except HermesError as exc:
        click.echo(f"warning: the plugins could not be loaded ({exc}); state a memory "
                   "provider keeps outside the home is not in this archive", err=True)
        return []
    found: list[Path] = []
    for provider in providers:
        try:
            paths = list(provider.backup_paths()) if hasattr(provider, "backup_paths") else []
        except Exception as exc:  # a provider's bug: said, not fatal
            click.echo(f"warning: {type(provider).__name__}.backup_paths() failed: {exc}",
                       err=True)
            continue
        for raw in paths:
            path = Path(str(raw)).expanduser()
            inside = path.resolve().is_relative_to(home.resolve())
            if path.is_absolute() and path.exists() and not inside and path not in found:
                found.append(path)
    return found


def _session_store_setting(home: Path) -> str:
    """config.yaml's ``sessions.store`` as written ("" when unset or unreadable)."""
    import yaml

    try:
        data = yaml.safe_load((home / "config.yaml").read_text(encoding="utf-8")) or {}
        return str((data.get("sessions") or {}).get("store") or "")
    except (OSError, ValueError, AttributeError, yaml.YAMLError):
        return ""


@click.command(name="backup")
@click.option("-o", "--output", type=click.Path(dir_okay=True, path_type=Path),
              help="The archive to write (a folder: a new archive in it). Default: "
                   "hermes-backup-DATE-TIME.tar.gz in the current folder.")
@click.option("--include-secrets", is_flag=True,
              help="Archive .env and auth.json (the keys) too.")
def backup(output: Path | None, include_secrets: bool) -> None:
    """Archive $HERMES_HOME: config, sessions (state.db copied consistently, even while hermes
    writes to it), memory, skills, plugins, cron jobs. The keys (.env, auth.json) only with
    --include-secrets. The archive is readable by you only."""
    from .archive import write_backup

    home = hermes_home()
    name = f"hermes-backup-{time.strftime('%Y%m%d-%H%M%S')}.tar.gz"
    out = (output / name if output and output.is_dir() else output) or Path.cwd() / name
    if out.exists():
        raise click.ClickException(f"{out} exists; choose another name with -o")
    if not out.parent.is_dir():
        raise click.ClickException(f"{out.parent} is not a folder; create it or choose "
                                   "another place with -o")
    external = _provider_paths(home)
    summary = write_backup(home, out, include_secrets=include_secrets, external=external)
    click.echo(f"backed up {home} into {out}: {summary.files} files, "
               f"{_size(out.stat().st_size)} ({_size(summary.size)} before compression)")
    if summary.databases:
        click.echo(f"databases copied with SQLite's backup API: {', '.join(summary.databases)}")
    for path in external:
        click.echo(f"kept outside the home by the memory provider, archived too: {path}")
    store = _session_store_setting(home)
    if store not in ("", "sqlite"):
        click.echo(f"the sessions are in the {store} store (sessions.store), not in this "
                   "archive: back them up with that store's tools (PostgreSQL: pg_dump)")
    if summary.left_out:
        click.echo(f"left out (the keys): {', '.join(summary.left_out)}; "
                   "`hermes backup --include-secrets` archives them")
    elif include_secrets:
        click.echo(f"the archive holds your keys: keep {out} private")


@click.command(name="restore")
@click.argument("archive", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--force", is_flag=True, help="Restore into a home that is not empty: the "
              "archive's files replace the home's of the same name.")
def restore(archive: Path, force: bool) -> None:
    """Restore a `hermes backup` archive into $HERMES_HOME, which must be new or empty
    (unless --force). Every file is checked against the archive's checksums and every
    database's integrity before anything is written."""
    from .restore import restore as restore_into

    home = hermes_home()
    pid = _gateway_pid(home)
    if pid is not None:
        raise click.ClickException(f"a gateway (pid {pid}) runs on {home}; stop it first "
                                   "with `hermes gateway stop`")
    done = restore_into(archive, home, force=force)
    made = time.strftime("%Y-%m-%d %H:%M", time.localtime(done.created_at))
    click.echo(f"restored {done.files} files into {home} (backup of {made}, "
               f"hermes {done.hermes or '?'})")
    if done.databases:
        click.echo(f"databases checked: {', '.join(done.databases)}")
    for outcome in done.external:
        click.echo(f"outside the home: {outcome}")
    if not done.include_secrets:
        click.echo("the backup holds no keys: put them back into .env (`hermes setup`)")

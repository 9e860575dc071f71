"""``hermes logs [COMPONENT] [-n N] [-f]``: the logs hermes writes, from the files alone.

The components are the files of ``$HERMES_HOME/logs`` (``agent``, ``gateway``, ``cron``: the
warnings and errors of hermes's loggers, see hermes_agent.kits.log_files; ``mcp-<server>``:
an MCP server's stderr) and the output logs of the kept background processes
(``processes/<id>.log``). ``-f`` follows, across rotations, until Ctrl-C."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import click
from hermes_agent import hermes_home

STANDARD = ("agent", "gateway", "cron")  # written by every hermes run (kits/log_files.py)
POLL = 0.2  # seconds between looks at a followed file


def available(home: Path) -> dict[str, Path]:
    found = {name: home / "logs" / f"{name}.log" for name in STANDARD
             if (home / "logs" / f"{name}.log").exists()}
    logs = home / "logs"
    for path in sorted(logs.glob("*.log")) if logs.is_dir() else []:
        found.setdefault(path.stem, path)
    procs = home / "processes"
    for path in sorted(procs.glob("*.log")) if procs.is_dir() else []:
        found.setdefault(path.stem, path)
    return found


def tail(path: Path, lines: int) -> tuple[list[str], "Follower"]:
    """The last ``lines`` complete lines of ``path``, and a follower that goes on exactly
    after them (a line written meanwhile is neither lost nor shown twice)."""
    follower = Follower(path)
    try:
        with open(path, "rb") as handle:
            follower.inode = os.fstat(handle.fileno()).st_ino
            data = handle.read()  # the logs are bounded (a few MiB)
    except OSError:
        return [], follower
    complete = data[:data.rfind(b"\n") + 1]
    follower.offset = len(complete)
    text = complete.decode("utf-8", errors="replace").splitlines()
    return (text[-lines:] if lines > 0 else []), follower


class Follower:
    """New lines of one file, read from where the last read stopped; a rotated or truncated
    file is read again from its start."""

    def __init__(self, path: Path):
        self.path, self.offset, self.inode, self.partial = path, 0, None, ""

    def read(self) -> list[str]:
        try:
            st = self.path.stat()
        except OSError:
            return []
        if (self.inode is not None and st.st_ino != self.inode) or st.st_size < self.offset:
            self.inode, self.offset = st.st_ino, 0  # a new file (rotation) or truncated
        self.inode = st.st_ino
        if st.st_size == self.offset:
            return []
        with open(self.path, "rb") as handle:
            handle.seek(self.offset)
            data = handle.read()
        self.offset += len(data)
        text = self.partial + data.decode("utf-8", errors="replace")
        *complete, self.partial = text.split("\n")
        return complete


def follow(followers: dict[str, Follower], prefix: bool) -> None:
    try:
        while True:
            sys.stdout.flush()  # a pipe (`hermes logs -f | grep ...`) sees each line now
            for name, follower in followers.items():
                for line in follower.read():
                    click.echo(f"{name}: {line}" if prefix else line)
            time.sleep(POLL)
    except KeyboardInterrupt:
        return


@click.command(name="logs")
@click.argument("component", required=False)
@click.option("-n", "--lines", type=click.IntRange(min=0), default=50, show_default=True,
              help="The last lines to show of each log.")
@click.option("-f", "--follow", "following", is_flag=True,
              help="Keep printing new lines as they are written (Ctrl-C stops).")
@click.option("--list", "listing", is_flag=True, help="List the logs (path and size).")
def logs(component: str | None, lines: int, following: bool, listing: bool) -> None:
    """The logs hermes writes under $HERMES_HOME/logs: COMPONENT is agent, gateway, cron,
    mcp-SERVER, or a background process's id; without it, every log."""
    home = hermes_home()
    found = available(home)
    if listing:
        if not found:
            click.echo(f"No logs yet in {home / 'logs'}.")
        for name, path in found.items():
            click.echo(f"{name:<16} {path}  ({os.path.getsize(path)} bytes)")
        return
    if component is not None:
        if component not in found and component not in STANDARD:
            known = ", ".join(found) or "none yet"
            raise click.ClickException(f"no log {component!r} in {home}; the logs: {known} "
                                       "(`hermes logs --list`)")
        chosen = {component: found.get(component, home / "logs" / f"{component}.log")}
    else:
        chosen = found
        if not chosen and not following:
            click.echo(f"No logs yet in {home / 'logs'}: hermes writes the warnings and errors "
                       "of the agent, the gateway and cron there (agent.log, gateway.log, "
                       "cron.log) once there are any.")
            return
        if not chosen:
            chosen = {name: home / "logs" / f"{name}.log" for name in STANDARD}
    followers = {}
    for name, path in chosen.items():
        shown, followers[name] = tail(path, lines)
        if len(chosen) > 1 and (shown or not following):
            click.echo(f"==> {name} ({path}) <==")
        for line in shown:
            click.echo(line)
    if following:
        follow(followers, prefix=len(chosen) > 1)

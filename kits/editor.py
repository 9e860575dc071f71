"""Owner: the CLI (`hermes_agent.cli`).

The user's editor, for commands that open a file in it (``hermes config edit``,
``hermes memory edit``): ``$VISUAL``, else ``$EDITOR``, else the first of
``sensible-editor``, ``editor``, ``nano``, ``vim``, ``vi`` found on ``PATH``."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from pathlib import Path

from hermes_agent import HermesError

__all__ = ["editor_command", "run_editor"]

FALLBACKS = ("sensible-editor", "editor", "nano", "vim", "vi")


def editor_command() -> list[str]:
    """The editor's command line (without the file); :class:`HermesError` saying what to set
    when none is configured or found."""
    command = os.environ.get("VISUAL") or os.environ.get("EDITOR")
    if command is None or not command.strip():
        found = next((shutil.which(name) for name in FALLBACKS if shutil.which(name)), None)
        if found is None:
            raise HermesError("no editor found: set $EDITOR to one that is installed, e.g. "
                              "`export EDITOR=nano`")
        return [found]
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise HermesError(f"$VISUAL/$EDITOR ({command!r}) cannot be parsed: {exc}") from exc
    return argv


def run_editor(path: Path) -> int:
    """Open ``path`` in the editor and wait; its exit status. :class:`HermesError` when the
    editor cannot be started."""
    argv = editor_command()
    try:
        return subprocess.call([*argv, str(path)])
    except OSError as exc:
        raise HermesError(f"could not start the editor {argv[0]!r} ({exc.strerror or exc}); "
                          "set $EDITOR to one that is installed, e.g. `export EDITOR=nano`"
                          ) from exc

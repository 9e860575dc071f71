"""Files whose contents must not reach the model's context, and files the file tools must not
change: the file tools' side of the danger detector's lists (:mod:`.danger.paths`)."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

#: where a hard link's other name would be a secret: $HOME's own files, these folders under it
#: (three levels deep) and $HERMES_HOME (two levels)
_SECRET_HOMES = (".ssh", ".aws", ".gnupg", ".kube", ".azure", ".docker", ".config/gh",
                 ".config/gcloud", ".config/rclone", ".config/hub", ".local/share/keyrings",
                 ".local/share/fish")
_MAX_CANDIDATES = 4000
#: hermes's stores that reach later prompts or run later, by their folder (or file) in
#: $HERMES_HOME: the tool that writes each one checks what it stores (injection scan, size,
#: what a job may do), so the file tools must not write around it
_HERMES_STORES = {
    "memories": "memory entries (the `memory` tool checks them and shows them in later "
                "system prompts)",
    "skills": "skills (use `skill_manage`, which validates and scans SKILL.md; reference "
              "files and scripts are added by the user)",
    "cron": "scheduled jobs (use the `cronjob` tool)",
    "SOUL.md": "the agent's identity (ask the user to edit it)",
}
#: projects under a system tree (container images keep their code there)
_SOURCE_TREES = ("/usr/src/", "/usr/local/src/")


def holds_secret(path: Path) -> bool:
    """Whether ``path``, after resolving symlinks, is a file holding secrets."""
    from .danger.paths import is_secret_file  # the detector loads with the first file call

    try:
        real = path.resolve()
    except (OSError, RuntimeError):  # a symlink loop: treat as unreadable
        return True
    return is_secret_file(str(path.absolute())) or is_secret_file(str(real))


def is_secret_real(real: str) -> bool:
    """Whether the file whose real path (no symlinks, as the kernel names an open file) is
    ``real`` holds secrets: a credential, or a process's environment or memory."""
    from .danger.paths import is_secret_file

    return is_secret_file(real)


def secret_hard_link(stat: os.stat_result) -> str | None:
    """The secret file that the file of ``stat`` is another name (a hard link) of, if any."""
    if stat.st_nlink < 2:
        return None
    return _secret_inodes()[0].get((stat.st_ino, stat.st_dev))


def shown_masked(real: str, stat: os.stat_result) -> bool:
    """Whether the file at ``real`` (of ``stat``) is read with its secret values masked:
    hermes's config.yaml, a backup or copy of it in $HERMES_HOME, or a hard link to one. The
    agent may read its settings (models, tools, MCP servers), not the keys written there."""
    from .danger.paths import current_hermes_home, folds_case

    fold = folds_case()
    hermes = os.path.realpath(os.path.expanduser(current_hermes_home() or "~/.hermes"))
    if _is_config_copy(real, hermes, fold):
        return True
    return stat.st_nlink > 1 and (stat.st_ino, stat.st_dev) in _secret_inodes()[1]


def _is_config_copy(path: str, hermes: str, fold: bool) -> bool:
    from .danger.paths import copy_bases

    folder, name = os.path.split(path)
    if fold:
        folder, hermes = folder.casefold(), hermes.casefold()
    return folder == hermes and ((name.casefold() if fold else name) == "config.yaml"
                                 or "config.yaml" in copy_bases(name.casefold() if fold
                                                                else name))


_Inodes = dict[tuple[int, int], str]
_inodes: tuple[float, tuple[str, str], tuple[_Inodes, _Inodes]] | None = None


def _secret_inodes() -> tuple[_Inodes, _Inodes]:
    """The secret files under $HOME's credential folders and $HERMES_HOME, and hermes's
    config.yaml and its copies (shown masked), by inode (cached for a second: a search meets
    many hard-linked files in a pnpm tree)."""
    global _inodes
    from .danger.paths import current_hermes_home, folds_case, is_secret_file

    home = os.environ.get("HOME") or str(Path.home())
    hermes = current_hermes_home() or str(Path(home) / ".hermes")
    now = time.monotonic()
    if _inodes is not None and _inodes[1] == (home, hermes) and now - _inodes[0] < 1.0:
        return _inodes[2]
    found: _Inodes = {}
    masked: _Inodes = {}
    real_hermes, fold = os.path.realpath(hermes), folds_case()
    roots = [(Path(home), 1), *((Path(home) / sub, 3) for sub in _SECRET_HOMES),
             (Path(hermes), 2)]
    candidates = (c for root, depth in roots for c in _files(root, depth))
    for _, candidate in zip(range(_MAX_CANDIDATES), candidates):
        try:
            other = candidate.stat()
        except OSError:
            continue
        if is_secret_file(str(candidate)):
            found.setdefault((other.st_ino, other.st_dev), str(candidate))
        elif _is_config_copy(os.path.realpath(candidate), real_hermes, fold):
            masked.setdefault((other.st_ino, other.st_dev), str(candidate))
    _inodes = (now, (home, hermes), (found, masked))
    return found, masked


def _files(folder: Path, depth: int) -> Iterator[Path]:
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        try:
            if entry.is_file(follow_symlinks=False):
                yield Path(entry.path)
            elif depth > 1 and entry.is_dir(follow_symlinks=False):
                yield from _files(Path(entry.path), depth - 1)
        except OSError:
            continue


def refusal(raw: str, path: Path, real: str | None = None, link_of: str | None = None) -> str:
    """Why ``read_file`` will not read ``raw`` and what to do instead."""
    if real is None:
        real = str(path.resolve())
    where = f" (it resolves to {real})" if real != str(path.absolute()) else ""
    if link_of:
        where = f" (it is a hard link to {link_of})"
    from .danger.paths import is_process_secret

    if is_process_secret(real):
        where += ", a process's environment or memory"
    return (f"{raw} holds secrets{where}: private keys, credentials, shell and REPL histories, "
            "process environments, hermes's own .env and auth.json (and their backups and "
            "copies) and hermes's cache are not read into the conversation. Ask the user "
            "to paste the part that is needed, or use the tool that consumes the file (ssh, "
            "aws, git) directly.")


def write_refusal(raw: str, *paths: str, fold: bool | None = None) -> str | None:
    """Why ``write_file``/``patch`` will not change ``raw`` (whose absolute and real paths are
    ``paths``), or None: credentials, SSH and shell start-up files, git's hooks and
    configuration, system files, and hermes's own files. ``fold``: names ignore case (None:
    as the file system here does, see ``danger.paths.folds_case``)."""
    from .danger.paths import (CREDENTIAL, GIT_HOOK, HERMES_STATE_TOPS, SECRET_FILE, SHELL_RC,
                               SUDOERS, SYSTEM_FILE, classify, current_hermes_home, folds_case)

    fold = folds_case() if fold is None else fold  # there ~/.HERMES is ~/.hermes

    def spelled(text: str) -> str:
        return text.casefold() if fold else text

    hermes = spelled(os.path.realpath(os.path.expanduser(current_hermes_home() or "~/.hermes")))
    home = os.path.realpath(os.environ.get("HOME") or str(Path.home()))
    credential_dirs = tuple(spelled(f"{home}/{sub}/") for sub in _SECRET_HOMES)
    for path in paths:
        labels = classify(path, fold=fold)
        if SECRET_FILE in labels or SHELL_RC in labels or (
                CREDENTIAL in labels and spelled(path).startswith(credential_dirs)):
            return (f"{raw} holds secrets or runs at log-in: a credential, an SSH or shell "
                    f"start-up file, or hermes's cache ({path}); write_file "
                    "and patch do not change it. If the user wants it changed, make the change "
                    "with the terminal tool, which asks the user to approve it.")
        if GIT_HOOK in labels:
            return (f"{raw} is one of git's hooks or its configuration ({path}): git runs the "
                    "commands they hold later, unchecked, so write_file and patch do not change "
                    "them. If the user wants it changed, make the change with the terminal tool "
                    "(`git config ...`), which asks the user to approve it.")
        if SUDOERS in labels or (SYSTEM_FILE in labels and not spelled(path).startswith(
                _SOURCE_TREES)):
            return (f"{raw} is a system file ({path}); write_file and patch do not change "
                    "system configuration or programs. If the user wants it changed, make the "
                    "change with the terminal tool, which asks the user to approve it.")
        inside = os.path.relpath(spelled(path), hermes)
        if not inside.startswith(".."):
            top = inside.split(os.sep)[0]
            store = next((k for k in _HERMES_STORES if spelled(k) == top), None)
            if store is not None:
                return (f"{raw} is in hermes's {store} ({path}): {_HERMES_STORES[store]}. "
                        "write_file and patch do not change what later sessions load, so its "
                        "checks cannot be bypassed.")
            if top in HERMES_STATE_TOPS or top.startswith("state.db"):  # settings, keys, plugins
                return (f"{raw} is hermes's own {inside} ({path}); write_file and patch do not "
                        "change hermes's settings, keys, sessions or plugins. Ask the user to "
                        "change it (`hermes config` for settings), or make the change with the "
                        "terminal tool, which asks the user to approve it.")
    return None

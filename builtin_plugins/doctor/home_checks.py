"""The checks of the home itself, which belong to no other plugin: the modes of
``$HERMES_HOME`` and of the files holding keys, the free disk space of the home's file
system and the cache key that seals what hermes keeps there (docs/cache.md).

Each works from the home's path and the environment alone, so ``hermes doctor`` runs them
also when config.yaml is too broken for a kernel to start.
"""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from hermes_agent import cache_key_path
from hermes_agent.api import Finding

MIB = 1024 * 1024
#: below this much free space hermes stops working (SQLite cannot write sessions): a problem
PROBLEM_BELOW = 200 * MIB
#: below this much: a warning (a few long sessions, logs or an install can fill it)
WARN_BELOW = 1024 * MIB
#: files in the home that hold keys; the start of every `hermes` command tightens them
SECRET_FILES = (".env", "auth.json")


def _mode(info: os.stat_result) -> str:
    return f"{stat.S_IMODE(info.st_mode):04o}"


def home_findings(home: Path, env: Mapping[str, str], notes: list[str] | None = None
                  ) -> list[Finding]:
    """Everything of the home itself: its modes, the secret files, the disk, the cache key.
    ``notes``: what the start of this command said about the secret files (it tightens them)."""
    home = Path(home)
    return [*mode_findings(home), *secret_findings(home, notes or []),
            disk_finding(*_usage(home), where=home), *cache_key_findings(cache_key_path(env))]


def mode_findings(home: Path) -> list[Finding]:
    """The home folder is private (0700); nothing in it is writable by other users."""
    try:
        info = os.stat(home)
    except FileNotFoundError:
        return [Finding("home", "ok", f"{home} does not exist yet (hermes creates it, 0700)")]
    out = []
    if info.st_mode & 0o022:
        out.append(Finding("home", "problem", f"{home} is writable by other users (mode "
                           f"{_mode(info)}): they could add plugins, which hermes runs, or "
                           "change config.yaml", f"chmod 700 {home}"))
    elif info.st_mode & 0o077:
        out.append(Finding("home", "warn", f"{home} is open to other users (mode "
                           f"{_mode(info)}): they may read sessions, memory and settings",
                           f"chmod 700 {home}"))
    if info.st_uid != os.getuid():
        out.append(Finding("home", "warn", f"{home} belongs to another user (uid {info.st_uid})",
                           f"run hermes as its owner, or set HERMES_HOME to a folder of yours"))
    loose = [str(path) for path in _entries(home) if _writable_by_others(path)]
    if loose:
        shown = " ".join(loose[:8]) + (" ..." if len(loose) > 8 else "")
        out.append(Finding("home files", "problem", f"writable by other users: {shown}",
                           f"chmod go-w {shown}"))
    if not out:
        out.append(Finding("home", "ok", f"{home} is private (mode {_mode(info)})"))
    return out


def _entries(home: Path) -> Iterator[Path]:
    """The home's own files and folders, and one level into plugins/ (code hermes runs)."""
    for child in sorted(home.iterdir()):
        yield child
        if child.name == "plugins" and child.is_dir() and not child.is_symlink():
            yield from sorted(child.iterdir())


def _writable_by_others(path: Path) -> bool:
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return not stat.S_ISLNK(info.st_mode) and bool(info.st_mode & 0o022)


def secret_findings(home: Path, notes: list[str]) -> list[Finding]:
    """.env and auth.json readable by their owner only; config.yaml too when it holds a
    key written into it. A loose file in a home others cannot enter is a warning (they read
    it once the home is opened), in one they can enter a problem."""
    out = []
    try:
        enterable = bool(os.stat(home).st_mode & 0o011)
    except OSError:
        enterable = False
    for name in SECRET_FILES:
        path = home / name
        said = [note for note in notes if note.startswith(f"{path} ")]
        if said:
            out.append(Finding("keys", "warn", said[0], "nothing more for the mode; if other "
                               f"users could read {path}, replace the keys it holds"))
            continue
        try:
            info = os.stat(path)
        except OSError:
            continue
        if info.st_mode & 0o077:
            out.append(_loose(path, "", info, enterable, f"chmod 600 {path}"))
    config = home / "config.yaml"
    try:
        info = os.stat(config)
    except OSError:
        return out or [_private()]
    secrets = written_secrets(config) if info.st_mode & 0o077 else []
    if secrets:
        out.append(_loose(config, f" ({', '.join(secrets[:5])})", info, enterable,
                          f"chmod 600 {config} (or move the keys to {home / '.env'} and write "
                          "${NAME} in config.yaml)"))
    return out or [_private()]


def _loose(path: Path, which: str, info: os.stat_result, enterable: bool, fix: str) -> Finding:
    if enterable:
        return Finding("keys", "problem", f"{path} holds keys{which} and other users may read "
                       f"it (mode {_mode(info)})", fix)
    return Finding("keys", "warn", f"{path} holds keys{which} and is open to other users "
                   f"(mode {_mode(info)}); only the private home folder keeps them out", fix)


def _private() -> Finding:
    return Finding("keys", "ok", "the files holding keys are readable by you only")


def written_secrets(config: Path) -> list[str]:
    """The dotted keys of config.yaml that hold a secret written in the file (not a
    ``${VAR}`` reference)."""
    import yaml

    from hermes_agent.kits.secret_text import is_secret_name

    try:
        data = yaml.safe_load(config.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError, UnicodeDecodeError):
        return []
    found: list[str] = []

    def walk(node: Any, prefix: str) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                dotted = f"{prefix}{key}"
                if isinstance(value, str) and value.strip() and "${" not in value \
                        and is_secret_name(str(key)):
                    found.append(dotted)
                else:
                    walk(value, dotted + ".")
        elif isinstance(node, list):
            for index, item in enumerate(node):
                walk(item, f"{prefix}{index}.")

    walk(data, "")
    return found


def _usage(home: Path) -> tuple[int, int]:
    """(free bytes for this user, total bytes) of the file system holding ``home`` (or its
    nearest existing parent)."""
    where = home
    while not where.exists() and where.parent != where:
        where = where.parent
    usage = shutil.disk_usage(where)
    return usage.free, usage.total


def disk_finding(free: int, total: int, *, where: Path | str,
                 problem_below: int = PROBLEM_BELOW, warn_below: int = WARN_BELOW) -> Finding:
    """The free space of the home's file system against the two thresholds."""
    said = f"{free / MIB:,.0f} MiB free of {total / MIB:,.0f} MiB on the file system of {where}"
    fix = (f"free space there (old sessions: `hermes sessions prune`), or move {where} to a "
           "larger disk and set HERMES_HOME")
    if free < problem_below:
        return Finding("disk", "problem", f"{said}: too little for hermes to save sessions", fix)
    if free < warn_below:
        return Finding("disk", "warn", f"{said}: running low", fix)
    return Finding("disk", "ok", said)


def cache_key_findings(path: Path) -> list[Finding]:
    """The key sealing the caches under $HERMES_HOME: this user's, 0600, 64 hex digits, in
    a folder no one else can write (else another user could swap it and forge a cache)."""
    folder = path.parent
    remove = f"rm {path} (hermes makes a new one)"
    try:
        folder_info = os.stat(folder)
    except OSError:
        return [Finding("cache key", "warn", f"{folder} does not exist, so hermes keeps no "
                        "caches (each command validates everything again)",
                        f"mkdir -p {folder} && chmod 700 {folder}")]
    out = []
    if folder_info.st_uid != os.getuid():
        out.append(Finding("cache key", "problem", f"{folder} belongs to another user (uid "
                           f"{folder_info.st_uid}), who could replace the key",
                           f"use a folder of yours: set XDG_STATE_HOME, or `chown` {folder}"))
    if folder_info.st_mode & 0o022:
        out.append(Finding("cache key", "problem", f"{folder} is writable by other users (mode "
                           f"{_mode(folder_info)}): they could replace the key and forge what "
                           "hermes caches (approvals, plugin secrets)", f"chmod 700 {folder}"))
    try:
        info = os.lstat(path)
    except OSError:
        return out or [Finding("cache key", "warn", f"{path} does not exist: hermes could not "
                               "make it, so it keeps no caches",
                               f"make {folder} writable by you (chmod 700 {folder})")]
    if not stat.S_ISREG(info.st_mode):
        out.append(Finding("cache key", "problem", f"{path} is not a plain file", remove))
    elif info.st_uid != os.getuid():
        out.append(Finding("cache key", "problem", f"{path} belongs to another user (uid "
                           f"{info.st_uid}): hermes does not use it and keeps no caches", remove))
    else:
        if info.st_mode & 0o077:
            out.append(Finding("cache key", "problem", f"{path} is readable by other users "
                               f"(mode {_mode(info)}): they could forge what hermes caches",
                               f"chmod 600 {path}"))
        if not _is_key(path):
            out.append(Finding("cache key", "problem", f"{path} is not a hermes cache key (64 "
                               "hex digits): hermes keeps no caches", remove))
    return out or [Finding("cache key", "ok", f"{path} (mode {_mode(info)}, in a private folder)")]


def _is_key(path: Path) -> bool:
    try:
        text = path.read_text(encoding="ascii").strip()
        return len(bytes.fromhex(text)) == 32
    except (OSError, ValueError):
        return False

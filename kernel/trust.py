"""Project trust: which folders' own files (context files, project plugins) hermes may treat
as the user's instructions and code. ``projects.trusted`` in config.yaml lists the trusted
folders; a listed folder trusts its subfolders too. Two folders are never trusted through
another entry: the user's home folder and ``/``. Only an entry naming exactly that folder
trusts it, and such an entry does not extend to its subfolders (listing ``~`` would
otherwise trust every project you ever clone)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .config import Config

__all__ = ["ProjectTrust", "is_trusted", "trusted_folders", "project_folder", "never_implicit",
           "folder_path", "TRUST_KEY"]

#: The config.yaml key listing the trusted folders.
TRUST_KEY = "projects.trusted"


def _user_home(env: Mapping[str, str] | None) -> Path:
    value = (env or {}).get("HOME") or os.environ.get("HOME") or str(Path.home())
    return Path(value).resolve()


def folder_path(value: str | Path, env: Mapping[str, str] | None = None,
                base: Path | None = None) -> Path:
    """``value`` as an absolute, resolved folder (``~`` is the user's home; a relative path
    is taken from ``base``, default the working directory)."""
    text = str(value)
    if text == "~" or text.startswith("~/"):
        text = str(_user_home(env)) + text[1:]
    path = Path(text)
    if not path.is_absolute():
        path = (base or Path.cwd()) / path
    return path.resolve()


def never_implicit(path: Path, env: Mapping[str, str] | None = None) -> bool:
    """Whether ``path`` is the home folder or ``/``: trusted only when listed by name."""
    resolved = path.resolve()
    return resolved == _user_home(env) or resolved.parent == resolved


def trusted_folders(config: Config | Mapping[str, Any], env: Mapping[str, str] | None = None
                    ) -> list[Path]:
    """The folders ``projects.trusted`` lists, resolved (entries that are not text are
    ignored: validation already reported them)."""
    raw = (config.get(TRUST_KEY) if isinstance(config, Config)
           else (config.get("projects") or {}).get("trusted"))
    return [folder_path(item, env) for item in raw or []  # relative entries: never (invalid)
            if isinstance(item, str) and (item.startswith("/") or item.split("/")[0] == "~")]


def is_trusted(path: Path | str, config: Config | Mapping[str, Any],
               env: Mapping[str, str] | None = None) -> bool:
    """Whether ``path`` is a trusted folder or inside one (see the module's rules)."""
    target = folder_path(path, env)
    special = never_implicit(target, env)
    for entry in trusted_folders(config, env):
        if entry == target:
            return True
        if not special and not never_implicit(entry, env) and entry in target.parents:
            return True
    return False


def _git_root(start: Path) -> Path | None:
    """The nearest folder at or above ``start`` (resolved) holding ``.git``."""
    for candidate in (start, *start.parents):
        if os.path.lexists(os.path.join(candidate, ".git")):
            return candidate
    return None


def project_folder(cwd: Path | str) -> Path:
    """The folder a working directory belongs to: its git repository's root, else itself."""
    start = Path(cwd).resolve()
    return _git_root(start) or start


class ProjectTrust:
    """``projects.trusted`` of one configuration: ``ProjectTrust(kernel.config,
    kernel.env)``. ``covers(path)`` decides; ``add`` and ``revoke`` edit config.yaml through
    the validated writer (the configuration read here is not reloaded: build a new one)."""

    def __init__(self, config: Config, env: Mapping[str, str] | None = None):
        self.config, self.env = config, env

    @property
    def folders(self) -> list[Path]:
        """The folders listed, resolved."""
        return trusted_folders(self.config, self.env)

    def covers(self, path: Path | str) -> bool:
        return is_trusted(path, self.config, self.env)

    def folder(self, value: Path | str) -> Path:
        """A command's PATH (or an entry) as a resolved absolute folder, ``~`` expanded."""
        return folder_path(value, self.env)

    def never_implicit(self, path: Path | str) -> bool:
        """The home folder or ``/``: trusted only when listed by name."""
        return never_implicit(self.folder(path), self.env)

    @staticmethod
    def project_folder(cwd: Path | str) -> Path:
        return project_folder(cwd)

    def folder_to_trust(self, cwd: Path | str) -> Path:
        """What trusting "this project" means in ``cwd``: its git root, or ``cwd`` itself when
        it is in no repository or the repository is the home folder (or ``/``)."""
        folder = project_folder(cwd)
        return self.folder(cwd) if self.never_implicit(folder) else folder

    def untrusted_project(self, path: Path | str) -> Path | None:
        """The project folder ``path`` (symbolic links followed) belongs to when the user has
        not trusted it, else None. Its project is its git repository (unless that is the home
        folder or ``/``): a clone is where someone else's files arrive. A path in no
        repository is the user's own (their folders, the system's files), as is hermes's own
        home. Judged on every file read, so each path is resolved once."""
        home = _user_home(self.env)
        target = Path(os.path.realpath(os.path.expanduser(str(path))))
        own = Path(os.path.realpath(self.config.home))
        if target == own or own in target.parents:
            return None

        def implicit(folder: Path) -> bool:  # the home folder or /
            return folder == home or folder.parent == folder

        folder = _git_root(target if target.is_dir() else target.parent)
        if folder is None or implicit(folder):
            return None
        for entry in trusted_folders(self.config, self.env):
            if entry == folder or (not implicit(entry) and entry in folder.parents):
                return None
        return folder

    def add(self, path: Path | str) -> bool:
        """List ``path`` (resolved) in config.yaml; False when it is listed already."""
        from .config_write import write_config_value

        target = self.folder(path)
        if not target.is_dir():
            raise NotADirectoryError(f"{target} is not a folder; give the project's folder")
        listed = _listed(self.config.home)
        if any(self.folder(item) == target for item in listed):
            return False
        write_config_value(self.config.home, TRUST_KEY, [*listed, str(target)])
        return True

    def revoke(self, path: Path | str) -> list[str]:
        """Remove every entry naming ``path``; the entries removed (none: nothing changed)."""
        from .config_write import write_config_value

        target = self.folder(path)
        listed = _listed(self.config.home)
        gone = [item for item in listed if self.folder(item) == target]
        if gone:
            write_config_value(self.config.home, TRUST_KEY, [i for i in listed if i not in gone])
        return gone


def _listed(home: Path) -> list[str]:
    from .config import read_raw_config

    raw = (read_raw_config(home).get("projects") or {}).get("trusted")  # as written
    return [item for item in raw if isinstance(item, str)] if isinstance(raw, list) else []

"""What a sandboxed command (and a file tool) may reach: the writable roots, the hidden
paths, the network. One :class:`SandboxPolicy` per session's working directory, built from
config.yaml (``sandbox:``, ``terminal.writable_paths``) by :func:`policy_for`.

- ``workspace`` (the default): the workspace (the working directory, unless it is the home
  folder, ``/`` or a top-level system folder) plus ``terminal.writable_paths`` and a private
  temporary folder are writable; everything else is read-only; ``$HERMES_HOME``, the
  credential locations and the key sealing hermes's caches are not visible at all.
- ``strict``: as ``workspace``, and no network whatever ``sandbox.network`` says.
- ``off``: no confinement (set by the user in config.yaml; ``approvals.mode: off`` never
  lifts the sandbox).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from hermes_agent import cache_key_path

from ..danger.paths import HISTORIES

Mode = Literal["strict", "workspace", "off"]
MODES: tuple[Mode, ...] = ("strict", "workspace", "off")
#: ``sandbox.mechanism``: auto takes the first that works here (bubblewrap, then Landlock)
MechanismName = Literal["auto", "bubblewrap", "landlock"]
MECHANISMS: tuple[MechanismName, ...] = ("auto", "bubblewrap", "landlock")

#: credential locations under the home folder that no command or file tool may see
HOME_CREDENTIALS = (
    ".ssh", ".aws", ".azure", ".gnupg", ".kube", ".docker", ".config/gcloud", ".config/gh",
    ".config/hub", ".config/rclone", ".local/share/keyrings", ".password-store", ".netrc",
    "_netrc", ".git-credentials", ".npmrc", ".pypirc", ".pgpass", ".my.cnf", ".vault-token",
    ".dockercfg", ".terraform.d/credentials.tfrc.json",
    # shell and REPL histories: `export OPENAI_API_KEY=...` typed or pasted there
    *HISTORIES)
#: the system's own secrets, readable by commands when hermes runs as root
SYSTEM_SECRETS = ("/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-",
                  "/etc/ssh/ssh_host_rsa_key", "/etc/ssh/ssh_host_ecdsa_key",
                  "/etc/ssh/ssh_host_ed25519_key", "/etc/ssh/ssh_host_dsa_key")
#: folders whose own path is never a workspace (a session started there gets none)
SYSTEM_TOP = frozenset({"/", "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib32",
                        "/lib64", "/media", "/mnt", "/opt", "/proc", "/root", "/run", "/sbin",
                        "/srv", "/sys", "/tmp", "/usr", "/var", "/Users", "/System",
                        "/Library", "/Applications", "/private"})


@dataclass(frozen=True)
class SandboxPolicy:
    """What one session's commands and file tools may reach (all paths resolved)."""

    mode: Mode
    workspace: Path | None  # None: no writable workspace (started in ~, / or a system folder)
    writable: tuple[Path, ...]  # the workspace, terminal.writable_paths (the tmp folder is the runner's)
    hidden: tuple[Path, ...]  # $HERMES_HOME, credential locations, cache key, sandbox.hidden_paths
    network: bool
    why_no_workspace: str = ""  # said to the user and the model when workspace is None
    shown: tuple[Path, ...] = ()  # inside hidden folders, readable again ($HERMES_HOME/skills)
    mechanism: str = "auto"  # sandbox.mechanism (one of MECHANISMS, else refused)

    @property
    def confined(self) -> bool:
        return self.mode != "off"

    def may_write(self, path: Path) -> bool:
        """Whether ``path`` (resolved by the caller) is under a writable root and not hidden."""
        if not self.confined:
            return True
        return not self.is_hidden(path) and any(_under(path, root) for root in self.writable)

    def is_hidden(self, path: Path) -> bool:
        """Whether ``path`` (resolved by the caller) is, or is inside, a hidden path."""
        return self.confined and any(_under(path, hidden) for hidden in self.hidden)


def _under(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def workspace_of(cwd: Path, home: Path) -> tuple[Path | None, str]:
    """The writable workspace for a session started in ``cwd``, or None and why."""
    cwd = cwd.resolve()
    if cwd == home.resolve():
        return None, (f"{cwd} is your home folder; start hermes in a project folder to let "
                      "its commands write there")
    if str(cwd) in SYSTEM_TOP:
        return None, f"{cwd} is a system folder; start hermes in a project folder"
    return cwd, ""


def policy_for(config: Any, cwd: Path, hermes_home: Path,
               env: Mapping[str, str] | None = None) -> SandboxPolicy:
    """The policy of a session in ``cwd`` under ``config`` (``config.get(dotted)``)."""
    env = os.environ if env is None else env
    home = Path(env.get("HOME") or Path.home())
    mode = str(config.get("sandbox.mode", "workspace") or "workspace")
    if mode not in MODES:
        mode = "workspace"  # config validation reports the typo; never fall open
    workspace, why = workspace_of(cwd, home)
    writable = [workspace] if workspace is not None else []
    writable += _expanded(config.get("terminal.writable_paths", []) or [], home, cwd)
    hidden = [hermes_home.resolve(), *(_resolved(home / name) for name in HOME_CREDENTIALS),
              _key_folder(env.get("HERMES_HOME", ""), env.get("HOME", ""),
                          env.get("XDG_STATE_HOME", ""))]  # the key sealing hermes's caches
    hidden += [Path(name) for name in SYSTEM_SECRETS]
    hidden += _expanded(config.get("sandbox.hidden_paths", []) or [], home, cwd)
    network = bool(config.get("sandbox.network", True)) and mode != "strict"
    # skills' scripts are run by the agent's terminal; they hold no secret
    shown = (hermes_home.resolve() / "skills",)
    # a typo stays as written: the runner refuses commands with the fix, never falls back
    wanted = str(config.get("sandbox.mechanism", "auto") or "auto")
    return SandboxPolicy(mode, workspace, tuple(dict.fromkeys(writable)),  # type: ignore[arg-type]
                         tuple(dict.fromkeys(hidden)), network, why, shown,
                         wanted)


@functools.lru_cache(maxsize=8)
def _key_folder(hermes_home: str, home: str, state: str) -> Path:
    """The cache key's folder (finding it reads $HERMES_HOME/.env: once per process and
    environment, not on every tool call)."""
    named = {"HERMES_HOME": hermes_home, "HOME": home, "XDG_STATE_HOME": state}
    return _resolved(cache_key_path({k: v for k, v in named.items() if v}).parent)


def _expanded(paths: Iterable[Any], home: Path, cwd: Path) -> list[Path]:
    """Configured paths resolved: ``~/x`` under the home folder, a relative one under cwd."""
    found = []
    for raw in paths:
        text = os.path.expandvars(str(raw))
        if text == "~" or text.startswith("~/"):
            path = home / text[2:]
        else:
            path = Path(text) if Path(text).is_absolute() else cwd / text
        found.append(_resolved(path))
    return found


def _resolved(path: Path) -> Path:
    return Path(os.path.realpath(path))

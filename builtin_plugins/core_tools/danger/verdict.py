"""Findings for a command: the keys it matches, split into the hard floor and the rest."""

from __future__ import annotations

import logging
import os
import re
from dataclasses import dataclass

from .analyse import Analyser, Scope
from .paths import current_hermes_home, folds_case

log = logging.getLogger("hermes_agent.approvals")

#: key -> description, in the order findings are listed. Keys are stored in users'
#: ``command_allowlist`` and sent in approval hooks: never rename one.
DESCRIPTIONS: dict[str, str] = {
    # the hard floor: always refused
    "delete_root": "recursive delete of the root, home or a system directory",
    "format_disk": "formatting a disk",
    "dd_device": "dd writing to a raw disk",
    "redirect_device": "writing to a raw disk",
    "disk_overwrite": "overwriting a raw disk",
    "fork_bomb": "a fork bomb",
    # asked
    "recursive_delete": "recursive delete",
    "find_delete": "deleting files found by find/xargs",
    "disk_tool": "a disk or partition tool",
    "world_writable": "making files world-writable",
    "chown_root": "recursive change of ownership",
    "pipe_to_shell": "running a downloaded or decoded script",
    "service_control": "stopping or restarting a system service",
    "shutdown": "shutting down or rebooting",
    "kill_all": "killing many processes",
    "kill_hermes": "stopping or signalling hermes itself (kill $PPID: it ends or freezes the "
                   "session)",
    "sql_destroy": "destroying database data",
    "system_config_write": "overwriting system configuration",
    "git_destroy": "discarding git history or work",
    "indirect_command": "a command that cannot be checked (its name or code comes from a "
                        "variable, substitution or eval of unknown text)",
    "inline_code": "interpreter code that deletes, writes, runs commands or changes permissions",
    "privilege_change": "becoming root or changing users, passwords or sudoers",
    "permission_change": "recursive, setuid/setgid or system-wide permission change",
    "reverse_shell": "a shell connected to the network",
    "credential_write": "writing a credential, SSH, shell start-up or history file",
    "secret_upload": "sending a credential file or the environment over the network",
    "credential_read": "reading a private key, credential or hermes's own secrets into the "
                       "output",
    "process_attach": "attaching a debugger or tracer to a running process, or dumping its "
                      "memory (it reads the secrets the process holds, hermes's API keys "
                      "among them)",
    "firewall_flush": "disabling or flushing the firewall",
    "network_lockout": "cutting the machine off the network (an interface or its addresses "
                       "taken down, the default route deleted, a firewall dropping all traffic "
                       "or SSH, networking or SSH stopped): a remote user cannot undo it",
    "crontab_remove": "removing the crontab",
    "sync_delete": "rsync --delete into the root, home or a system directory",
    "hermes_state": "changing hermes's own settings, keys, plugins, memory, skills or "
                    "scheduled jobs",
}
HARD_KEYS = frozenset({"delete_root", "format_disk", "dd_device", "redirect_device",
                       "disk_overwrite", "fork_bomb"})
_ORDER = {key: n for n, key in enumerate(DESCRIPTIONS)}
_SQL = re.compile(r"(?i:\bdrop\s+(?:table|database|schema)\b|\btruncate\s+table\b"
                  r"|\bdelete\s+from\s+[\w.]+\s*(?:;|$|\"|'))")


@dataclass(frozen=True)
class Finding:
    keys: tuple[str, ...]
    descriptions: tuple[str, ...]

    @property
    def description(self) -> str:
        return "; ".join(self.descriptions)


def analyse(command: str, cwd: str | None = None, fold: bool | None = None) -> tuple[str, ...]:
    """Every key ``command`` matches; relative paths are judged against ``cwd`` when given.
    ``fold``: file names ignore case (``~/.SSH/ID_RSA`` is ``~/.ssh/id_rsa``); None: where the
    file system does (macOS, Windows, a case-insensitive home; see ``paths.folds_case``).
    Never cached: the links on disk are part of the verdict (``notes.txt``, harmless when one
    call writes it, may be a link to ``~/.bashrc`` by the next)."""
    return _analyse(command, cwd, os.environ.get("HOME"), current_hermes_home(), fold)


def _analyse(command: str, cwd: str | None, home: str | None,
             hermes_home: str | None, fold: bool | None = None) -> tuple[str, ...]:
    analyser = Analyser()
    try:
        analyser.script(command, Scope(cwd=cwd, fold=folds_case() if fold is None else fold), 0)
    except RecursionError:
        analyser.add("indirect_command")
    except Exception:  # a checker bug must not let a command through unasked
        log.exception("danger check failed for %r; asking instead", command[:200])
        analyser.add("indirect_command")
    if _SQL.search(re.sub(r"[ \t]+", " ", command.replace("\\\n", " "))):
        analyser.add("sql_destroy")
    return tuple(sorted(analyser.found, key=lambda k: _ORDER.get(k, len(_ORDER))))


def _finding(keys: tuple[str, ...]) -> Finding | None:
    return Finding(keys, tuple(DESCRIPTIONS[k] for k in keys)) if keys else None


def judge(command: str, cwd: str | None = None) -> tuple[Finding | None, Finding | None]:
    """The hard-floor findings of ``command`` and those that need approval, from one analysis."""
    keys = analyse(command, cwd)
    return (_finding(tuple(k for k in keys if k in HARD_KEYS)),
            _finding(tuple(k for k in keys if k not in HARD_KEYS)))


def hardline(command: str, cwd: str | None = None) -> Finding | None:
    """The hard-floor findings of ``command`` (always refused), or None."""
    return _finding(tuple(k for k in analyse(command, cwd) if k in HARD_KEYS))


def dangerous(command: str, cwd: str | None = None) -> Finding | None:
    """The findings of ``command`` that need approval, or None."""
    return _finding(tuple(k for k in analyse(command, cwd) if k not in HARD_KEYS))

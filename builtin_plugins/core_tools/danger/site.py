"""The per-command context the rules report to: findings, the working directory, and how a
path being written or deleted is judged."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from .paths import (CREDENTIAL, DEVICE, GIT_HOOK, HERMES_STATE, HOME_DIR, KEY_FILE, ROOT,
                    SHELL_RC, SOCKET, SUDOERS, SYSTEM_DIR, SYSTEM_FILE, classify, file_key,
                    is_protected_dir, link_target)

#: markers standing for text the analyser cannot read (see analyse.Analyser.expand)
OPAQUE, FETCHED, DECODED, REMOTE, SECRET = "\x00", "\x02", "\x03", "\x04", "\x05"
MARKERS = OPAQUE + FETCHED + DECODED + REMOTE + SECRET
#: hermes's own pid (``$PPID``: the commands it runs are its children); unknown text elsewhere
HERMES_PID = OPAQUE + "hermes-pid" + OPAQUE
#: what running unreadable text means, by the marker it carries (first match wins)
MARKER_KEYS = ((REMOTE, "reverse_shell"), (FETCHED, "pipe_to_shell"), (DECODED, "pipe_to_shell"),
               (OPAQUE, "indirect_command"), (SECRET, "indirect_command"))


def opaque_key(text: str) -> str | None:
    """The finding for running ``text`` as code when parts of it cannot be read."""
    return next((key for marker, key in MARKER_KEYS if marker in text), None)


def base_name(word: str) -> str:
    return word.rstrip("/").rsplit("/", 1)[-1]


@dataclass
class Site:
    add: Callable[[str], None]
    cwd: str | None
    run: Callable[[list[str]], None]  # judge another command (find -exec, xargs)
    command: str = ""  # the command's name
    elevated: bool = False
    via_xargs: bool = False
    stdin_paths: list[str] = field(default_factory=list)  # files redirected into the command
    pipeline: list[list[str]] = field(default_factory=list)  # earlier commands in its pipeline
    links: dict[str, str] = field(default_factory=dict)  # links made earlier in the text
    fold: bool | None = None  # names ignore case (None: as the file system here does)

    def labels(self, path: str) -> frozenset[str]:
        """What writing or reading ``path`` touches: also what a link there points to."""
        labels = classify(path, self.cwd, self.fold)
        target = self.links.get(file_key(path, self.cwd, self.fold)) or link_target(
            path, self.cwd)
        return labels | classify(target, self.cwd, self.fold) if target else labels

    def write(self, path: str, redirect: bool = False) -> None:
        """``path`` is written, truncated or replaced."""
        labels = self.labels(path)
        if DEVICE in labels:
            self.add("redirect_device" if redirect else "disk_overwrite")
        if SOCKET in labels:
            self.add("reverse_shell")
        if SUDOERS in labels:
            self.add("privilege_change")
        if CREDENTIAL in labels or SHELL_RC in labels:
            self.add("credential_write")
        if SYSTEM_FILE in labels or ROOT in labels or SYSTEM_DIR in labels:
            self.add("system_config_write")
        if GIT_HOOK in labels:
            self.add("indirect_command")
        if HERMES_STATE in labels:
            self.add("hermes_state")

    def delete(self, path: str, recursive: bool) -> None:
        """``path`` is deleted (or moved away); ``recursive``: with everything below it. (A link
        is deleted, not what it points to.)"""
        labels = classify(path, self.cwd, self.fold)
        if recursive and is_protected_dir(labels):
            self.add("delete_root")
        if DEVICE in labels or SYSTEM_FILE in labels and HOME_DIR not in labels:
            self.add("system_config_write")
        if SUDOERS in labels:
            self.add("privilege_change")
        if CREDENTIAL in labels or SHELL_RC in labels:
            self.add("credential_write")
        if HERMES_STATE in labels:
            self.add("hermes_state")

    def is_secret(self, path: str) -> bool:
        """Reading ``path`` hands over a secret (a private key, credentials, hermes's keys)."""
        return "secret_file" in self.labels(path)

    def is_credential(self, path: str) -> bool:
        return bool(self.labels(path) & {CREDENTIAL, KEY_FILE})

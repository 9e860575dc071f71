"""What a path names: the root, the home directory (in any spelling), a system directory or
file, a disk device, a network socket, a credential or a shell start-up file."""

from __future__ import annotations

import fnmatch
import os
import posixpath
import re
from functools import lru_cache

#: stands for text the analyser cannot know (an unknown variable or substitution)
UNKNOWN = "\x00"
#: where ``~`` and ``$HOME`` point in a normalised path (two levels deep, like /home/user)
HOME = "/home/\x01"

ROOT, HOME_DIR, SYSTEM_DIR, SYSTEM_FILE, DEVICE, SOCKET, CREDENTIAL, KEY_FILE, SHELL_RC, \
    SUDOERS = ("root", "home", "system_dir", "system_file", "device", "socket", "credential",
               "key_file", "shell_rc", "sudoers")

#: directories whose recursive deletion (or moving away) is always refused
SYSTEM_DIRS = frozenset({
    "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib32", "/lib64", "/libx32", "/opt",
    "/proc", "/sbin", "/srv", "/sys", "/usr", "/var", "/usr/bin", "/usr/lib", "/usr/lib64",
    "/usr/local", "/usr/local/bin", "/usr/sbin", "/usr/share", "/usr/include", "/var/lib",
    "/var/log", "/var/spool", "/var/mail", "/Users", "/System", "/Library", "/Applications",
    "/private", "/snap", "/mnt", "/media", "/run"})
#: trees whose files are system configuration or programs
_SYSTEM_TREES = ("/etc/", "/usr/", "/bin/", "/sbin/", "/lib/", "/lib32/", "/lib64/", "/libx32/",
                 "/boot/", "/sys/", "/proc/", "/var/spool/cron/", "/System/", "/Library/",
                 "/private/etc/")
_DEVICE = re.compile(r"/dev/(?:sd|hd|vd|xvd|nvme|mmcblk|disk|rdisk|md\d|dm-|mapper/|sr\d|nbd|"
                     r"loop\d|zram|mem$|kmem$|port$|root$)")
_SOCKET = re.compile(r"/dev/(?:tcp|udp)/")
_CREDENTIAL_DIRS = frozenset({".ssh", ".aws", ".gnupg", ".kube", ".azure", ".docker", "gcloud"})
_CREDENTIAL_NAMES = frozenset({
    ".env", ".netrc", "_netrc", ".git-credentials", "auth.json", ".npmrc", ".pypirc", ".pgpass",
    ".my.cnf", "credentials", "credentials.json", "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519",
    "authorized_keys", "known_hosts", "shadow", "gshadow", ".vault-token", ".dockercfg"})
_ENV_TEMPLATES = frozenset({".env.example", ".env.sample", ".env.template", ".env.dist"})
_SHELL_RC = frozenset({
    ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc",
    ".zprofile", ".zshenv", ".zlogin", ".zlogout", ".kshrc", ".cshrc", ".tcshrc", ".mkshrc",
    "config.fish", ".inputrc", "bash.bashrc", "profile", "environment"})
_TRAILING = re.compile(r"(?:/+(?:\*|\.\*|\*\*|\.)?)+$")
_BRACE = re.compile(r"\{([^{}]*,[^{}]*)\}")
_GLOB = re.compile(r"[*?\[]")
#: what a glob is tried against: the places whose deletion is always refused
_GLOB_TARGETS = ("/", HOME, "/root", *sorted(SYSTEM_DIRS))


def normalise(path: str, cwd: str | None = None, home: str | None = None) -> str:
    """``path`` made absolute (when ``cwd`` is known), ``..`` folded, trailing ``/``, ``/*``,
    ``/.`` dropped, and every spelling of the home directory (also ``home``, the real one)
    written as :data:`HOME`."""
    p = path
    if p.startswith("~"):
        head, _, rest = p[1:].partition("/")
        p = (HOME if head in ("", UNKNOWN) else f"/home/{head}") + ("/" + rest if rest else "")
    elif p in ("*", ".*") and cwd is not None:
        p = "."
    if not p.startswith("/"):
        if cwd is None:
            return _TRAILING.sub("", p) or p
        p = posixpath.join(cwd, p)
    p = "/" + _TRAILING.sub("", p).lstrip("/")
    p = posixpath.normpath(p)
    if home and (p == home or p.startswith(home + "/")):
        p = HOME + p[len(home):]
    if p == "/root" or p.startswith("/root/"):
        p = HOME + p[len("/root"):]
    return p


def classify(path: str, cwd: str | None = None) -> frozenset[str]:
    """The labels of ``path`` (empty for an ordinary file)."""
    env_home = os.environ.get("HOME") or ""
    home = posixpath.normpath(env_home) if env_home.startswith("/") and env_home != "/" else None
    return _classify(path, cwd, home)


@lru_cache(maxsize=4096)
def _classify(path: str, cwd: str | None, home: str | None) -> frozenset[str]:
    if not path or path.startswith(("-", "http:", "https:")):
        return frozenset()
    if "{" in path and _BRACE.search(path):  # {a,b} brace expansion: every variant counts
        return frozenset().union(*(_classify(v, cwd, home) for v in expand_braces(path)))
    if _GLOB.search(path):
        pattern = normalise(path, cwd, home)
        matched = [t for t in _GLOB_TARGETS if fnmatch.fnmatchcase(t, pattern)]
        if matched:
            return frozenset().union(*(_labels(t) for t in matched))
    return _labels(normalise(path, cwd, home))


def expand_braces(word: str, limit: int = 64) -> list[str]:
    """Bash brace expansion of ``word``, in order (``{a,b}c`` -> ``ac bc``), at most ``limit``
    words."""
    m = _BRACE.search(word)
    if m is None:
        return [word]
    head, tail = word[:m.start()], word[m.end():]
    out: list[str] = []
    for option in m.group(1).split(","):
        out.extend(expand_braces(head + option + tail, limit - len(out)))
        if len(out) >= limit:
            break
    return out[:limit]


def _labels(p: str) -> frozenset[str]:
    labels: set[str] = set()
    if p == "/":
        labels.add(ROOT)
    parts = p.split("/")
    if p == HOME or (len(parts) == 3 and parts[1] in ("home", "Users") and parts[2]):
        labels.add(HOME_DIR)
    if p in SYSTEM_DIRS:
        labels.add(SYSTEM_DIR)
    if p.startswith(_SYSTEM_TREES):
        labels.add(SYSTEM_FILE)
    if p.startswith("/dev/"):
        if _SOCKET.match(p):
            labels.add(SOCKET)
        elif _DEVICE.match(p):
            labels.add(DEVICE)
    if p.startswith(("/etc/sudoers", "/private/etc/sudoers")) or p in (
            "/etc/passwd", "/etc/shadow", "/etc/group", "/etc/gshadow"):
        labels.add(SUDOERS)
    name = parts[-1]
    if (name in _CREDENTIAL_NAMES or any(d in _CREDENTIAL_DIRS for d in parts[:-1])
            or name in _CREDENTIAL_DIRS
            or (name.startswith(".env.") and name not in _ENV_TEMPLATES)):
        labels.add(CREDENTIAL)
    if name.endswith((".pem", ".key", ".p12", ".pfx", ".kdbx")):
        labels.add(KEY_FILE)  # a secret to send, but also what key generators write
    if name in _SHELL_RC and (name.startswith(".") or p.startswith("/etc/")):
        labels.add(SHELL_RC)
    return frozenset(labels)


def is_protected_dir(labels: frozenset[str]) -> bool:
    """The root, the home directory or a system directory itself (or all of its contents)."""
    return bool(labels & {ROOT, HOME_DIR, SYSTEM_DIR})

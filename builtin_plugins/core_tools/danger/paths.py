"""What a path names: the root, the home directory (in any spelling), a system directory or
file, a disk device, a network socket, a credential or a shell start-up file."""

from __future__ import annotations

import fnmatch
import os
import posixpath
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import lru_cache

#: stands for text the analyser cannot know (an unknown variable or substitution)
UNKNOWN = "\x00"
#: where ``~`` and ``$HOME`` point in a normalised path (two levels deep, like /home/user)
HOME = "/home/\x01"

ROOT, HOME_DIR, SYSTEM_DIR, SYSTEM_FILE, DEVICE, SOCKET, CREDENTIAL, KEY_FILE, SHELL_RC, \
    SUDOERS, SECRET_FILE, SECRET_DIR, GIT_HOOK = (
        "root", "home", "system_dir", "system_file", "device", "socket", "credential",
        "key_file", "shell_rc", "sudoers", "secret_file", "secret_dir", "git_hook")
#: hermes's own files in $HERMES_HOME that change what it does or may do, or reach later
#: sessions unchecked: settings, keys, plugins, memory, skills, scheduled jobs, identity
HERMES_STATE = "hermes_state"
HERMES_STATE_TOPS = frozenset({".env", "auth.json", "config.yaml", "plugins", "memories",
                                "skills", "cron", "soul.md"})

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
_DEVICE = re.compile(r"/dev/(?:sd|hd|vd|xvd|nvme|mmcblk|disk|rdisk|md\d|md/|dm-|mapper/|sr\d|nbd|"
                     r"loop\d|zram|mem$|kmem$|port$|root$|block/|sg\d|zvol/|zd\d|bcache|rbd|"
                     r"drbd|mtd|pmem|ram\d|fd\d|ubd|"
                     # /dev/VG/LV: an LVM volume (folders of other devices excluded)
                     r"(?!(?:pts|shm|fd|mqueue|hugepages|net|snd|input|dri|bus|char|cpu|usb|"
                     r"v4l|vfio|tcp|udp|serial|gpiochip|hidraw|bsg|dma_heap|vhost)/)[^/]+/[^/]+$)")
_SOCKET = re.compile(r"/dev/(?:tcp|udp)/")
_CREDENTIAL_DIRS = frozenset({".ssh", ".aws", ".gnupg", ".kube", ".azure", ".docker", "gcloud"})
_CREDENTIAL_NAMES = frozenset({
    ".env", ".netrc", "_netrc", ".git-credentials", "auth.json", ".npmrc", ".pypirc", ".pgpass",
    ".my.cnf", "credentials", "credentials.json", "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519",
    "authorized_keys", "known_hosts", "shadow", "gshadow", ".vault-token", ".dockercfg"})
#: files under ~/.ssh that hold nothing secret (public keys end in .pub)
_PUBLIC_NAMES = frozenset({"known_hosts", "known_hosts.old", "authorized_keys",
                           "authorized_keys2", "allowed_signers"})
_SSH_PUBLIC = _PUBLIC_NAMES | {"config", "environment"}
#: credential names that only hold secrets in the home directory or hermes's home (a project's
#: own .env is the project's working material)
_HOME_ONLY_SECRETS = frozenset({".env"})
#: credential files of tools under ~/.config
_CONFIG_SECRETS = ("/.config/gh/hosts.yml", "/.config/hub", "/.config/gcloud/",
                   "/.config/rclone/rclone.conf", "/.local/share/keyrings/",
                   "/hermes-agent/cache.key")  # seals hermes's caches (kernel/seal.py)
#: shell and REPL histories in the home folder (``export OPENAI_API_KEY=...`` pasted there)
HISTORIES = (".bash_history", ".zsh_history", ".zhistory", ".histfile", ".sh_history",
             ".local/share/fish/fish_history", ".config/fish/fish_history", ".python_history",
             ".psql_history", ".mysql_history", ".node_repl_history", ".sqlite_history",
             ".rediscli_history", ".irb_history")
_HISTORIES = frozenset(HISTORIES)
_ENV_TEMPLATES = frozenset({".env.example", ".env.sample", ".env.template", ".env.dist"})
#: what editors, tools and people add to a file's name for a backup, swap file or copy:
#: ``.env~``, ``.env.swp``, ``.env.save``, ``.env.orig``, ``.env.1``, ``.env (copy)``,
#: ``/etc/shadow-`` (``#.env#``, ``.#.env`` and vim's ``..env.swp`` are stripped in front)
_COPY_SUFFIX = re.compile(
    r"(?:~+|#|-|\.(?:sw[a-p]|bak\d*|backup\d*|old|orig|save[d]?|tmp|temp|copy|prev|previous|"
    r"last|dist-old|ucf-old|rpmsave|rpmnew|dpkg-old|\d+)|[-_ ](?:bak|backup|old|orig|copy|"
    r"save|\d+)|\s*\(copy(?: \d+)?\)|\s+copy(?: \d+)?|\d+)$", re.I)
#: the undotted spellings of a copy of .env (``env.backup``, ``env.bak``, ``env~``)
_UNDOTTED_ENV_COPY = re.compile(r"env(?:~+|\.(?:bak\d*|backup\d*|old|orig|save[d]?|sw[a-p]|"
                                r"copy|\d+))", re.I)
_SHELL_RC = frozenset({
    ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc",
    ".zprofile", ".zshenv", ".zlogin", ".zlogout", ".kshrc", ".cshrc", ".tcshrc", ".mkshrc",
    "config.fish", ".inputrc", "bash.bashrc", "profile", "environment", ".bash_aliases",
    ".bash_env", ".xprofile", ".xinitrc", ".xsession", ".xsessionrc", ".pam_environment"})
#: files under the home directory that hold secrets or run at log-in (targets for globs)
_HOME_FILES = (
    ".ssh/id_rsa", ".ssh/id_dsa", ".ssh/id_ecdsa", ".ssh/id_ed25519", ".ssh/authorized_keys",
    ".ssh/rc", ".ssh/config", ".aws/credentials", ".aws/config", ".kube/config",
    ".docker/config.json", ".netrc", ".git-credentials", ".npmrc", ".pypirc", ".pgpass",
    ".my.cnf", ".env", ".vault-token", ".config/gh/hosts.yml", ".config/rclone/rclone.conf",
    ".config/fish/config.fish", ".bashrc", ".bash_profile", ".bash_login", ".bash_logout",
    ".bash_aliases", ".profile", ".zshrc", ".zprofile", ".zshenv", ".zlogin", *HISTORIES)
#: other files whose contents run later by themselves: per-user services and autostart
#: entries, git's and editors' configuration (aliases, pagers, hooks), Python start-up hooks
_RUNS_AT_START = re.compile(
    r"/\.config/(?:systemd/user|autostart)/[^/]+$|/\.local/share/systemd/user/[^/]+$|"
    r"/(?:\.gitconfig|\.config/git/config|\.vimrc|\.exrc|\.tmux\.conf|\.curlrc|\.wgetrc|"
    r"sitecustomize\.py|usercustomize\.py)$|/site-packages/[^/]+\.pth$")
#: folders under the home folder holding secrets further down (read recursively)
_SECRET_FOLDERS = frozenset(HOME + f for f in ("/.config", "/.local", "/.local/share",
                                               "/.local/share/fish", "/.local/share/keyrings"))
_TRAILING = re.compile(r"(?:/+(?:\*|\.\*|\*\*|\.)?)+$")
#: a process's environment and memory: hermes's own hold the API keys it was started with (its
#: children's $PPID, its file tools' ``self``), under any pid, thread, glob or unknown name
_PROCESS_SECRET = re.compile(r"^/proc/[^/]+/(?:task/[^/]+/)?(?:environ|mem)$")
#: /proc and a process's folder in it (reading one whole, or through a glob, reads the
#: environment): a pid, ``self``, ``thread-self`` or a name the analyser cannot know (an unknown
#: variable), and its threads' folders (``/proc/*`` is /proc itself once normalised)
#: a process's links to its view of the root folder (/proc/self/root/home/me/.ssh/id_rsa is
#: the key) and to its working directory (hermes's own may be the home folder or its home)
_PROCESS_LINK = re.compile(r"^/proc/[^/]+/(?:task/[^/]+/)?(root|cwd)(/.*)?$")
#: another process's open and mapped files and their folders: hermes's own (its children's
#: $PPID) may be state.db or a configuration holding keys; a command's own (``self``,
#: ``thread-self``, as /dev/fd and /dev/stdin are) are what it was handed. Names with ``:``
#: are pipes and sockets.
_PROCESS_FD = re.compile(
    r"^/proc/(?!(?:self|thread-self)/)[^/]+/(?:task/[^/]+/)?(?:fd|map_files)(/[^/:]+)?$")
_OWN_FD = re.compile(r"^/proc/(?:self|thread-self)/(?:task/[^/]+/)?fd/")
#: what a path through an unknown folder is not known to be (the folder itself is unknown)
_FOLDER_LABELS = frozenset({ROOT, HOME_DIR, SYSTEM_DIR})
_PROCESS_DIR = re.compile(r"^/proc(?:/(?:\d+|self|thread-self|[^/]*\x00[^/]*)"
                          r"(?:/task(?:/[^/]+)?)?)?$")
# git's hooks, and its configuration (core.pager, core.fsmonitor, aliases, filter drivers)
_GIT_HOOK = re.compile(r"(?:^|/)\.git/(?:modules/.+/|worktrees/[^/]+/)?"
                       r"(?:hooks(?:/|$)|config(?:\.worktree)?$)")
_BRACE = re.compile(r"\{([^{}]*,[^{}]*)\}")
_GLOB = re.compile(r"[*?\[]")
#: what a glob is tried against: the places whose deletion is always refused
_GLOB_TARGETS = ("/", HOME, "/root", *sorted(SYSTEM_DIRS))
#: the mixed-case names above as compared when case is folded (every other name is lower case)
_FOLDED_SYSTEM_DIRS = frozenset(d.casefold() for d in SYSTEM_DIRS)
_FOLDED_SYSTEM_TREES = tuple(t.casefold() for t in _SYSTEM_TREES)
_FOLDED_GLOB_TARGETS = tuple(dict.fromkeys(t.casefold() for t in _GLOB_TARGETS))
#: systems whose file systems ignore case by default (APFS and HFS+, NTFS)
_CASE_INSENSITIVE_PLATFORMS = ("darwin", "win32", "cygwin")


def folds_case() -> bool:
    """Whether file names ignore case here: on macOS and Windows, or when the home directory
    is on a case-insensitive file system. There ``~/.SSH/ID_RSA`` is ``~/.ssh/id_rsa``, and
    paths are judged with their case folded."""
    return sys.platform in _CASE_INSENSITIVE_PLATFORMS or _ignores_case(os.environ.get("HOME"))


@lru_cache(maxsize=8)
def _ignores_case(folder: str | None) -> bool:
    """Whether names in the directory ``folder`` (or ``folder``'s own name) are found in any
    case: the same name with its case swapped is the same file. False when it cannot tell."""
    if not folder or not folder.startswith("/") or not folder.strip("/"):
        return False
    try:
        if not os.path.isdir(folder):
            return False
        folder = posixpath.normpath(folder)
        pairs: list[tuple[str, str]] = []
        parent, name = posixpath.split(folder)
        if name.swapcase() != name:
            pairs.append((folder, posixpath.join(parent, name.swapcase())))
        with os.scandir(folder) as entries:
            for _, entry in zip(range(64), entries):
                if entry.name.swapcase() != entry.name:
                    pairs.append((entry.path, posixpath.join(folder, entry.name.swapcase())))
                    break
        for real, swapped in pairs:
            try:
                a, b = os.lstat(real), os.lstat(swapped)
            except OSError:
                continue
            if (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino):
                return True
    except (OSError, ValueError):
        return False
    return False


def normalise(path: str, cwd: str | None = None, home: str | None = None,
              fold: bool = False) -> str:
    """``path`` made absolute (when ``cwd`` is known), ``..`` folded, trailing ``/``, ``/*``,
    ``/.`` dropped, and every spelling of the home directory (also ``home``, the real one, in
    any case when ``fold``) written as :data:`HOME`."""
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
    p = _fold_path(p)
    if home and _under(p, home, fold):
        p = HOME + p[len(home):]
    if _under(p, "/root", fold):
        p = HOME + p[len("/root"):]
    return p


def _fold_path(p: str) -> str:
    """The absolute ``p`` with ``.`` and ``..`` folded as the kernel does (see
    :func:`_fold_dots`)."""
    if "/.." not in p or "/proc/" not in p:
        return posixpath.normpath(p)
    return "/" + "/".join(_fold_dots(p.split("/"), climb=False))


def _fold_dots(parts: list[str], climb: bool) -> list[str]:
    """``parts`` of a path with ``.`` and ``..`` folded; a ``..`` at the top is kept when
    ``climb``, else dropped (as at /). The kernel follows a process's ``cwd`` or ``root`` link
    before the ``..`` after it: the rest is folded on its own, climbing above the folder
    ``cwd`` leads to (/proc/1/cwd/.. is not /proc/1) and stopping at the root ``root`` is."""
    out: list[str] = []
    for n, part in enumerate(parts):
        if part in ("", "."):
            continue
        if part == "..":
            if out and out[-1] != "..":
                out.pop()
            elif climb:
                out.append(part)
            continue
        out.append(part)
        below = out[out.count(".."):]  # the link from this fold's own top
        if below[-1] in ("cwd", "root") and below[0] == "proc" and (
                len(below) == 3 or len(below) == 5 and below[2] == "task"):
            return out + _fold_dots(parts[n + 1:], climb=part == "cwd")
    return out


def _under(p: str, folder: str, fold: bool) -> bool:
    """Whether ``p`` is ``folder`` or lies below it (ignoring case when ``fold``)."""
    head = p[:len(folder)]
    return (head.casefold() == folder.casefold() if fold else head == folder) and (
        len(p) == len(folder) or p[len(folder)] == "/")


def file_key(path: str, cwd: str | None, fold: bool | None = None) -> str:
    """How the analyser names a file it saw written or linked earlier in the text: normalised,
    and case-folded where names ignore case (``X.sh`` written, ``x.sh`` run)."""
    p = normalise(path, cwd)
    return p.casefold() if (folds_case() if fold is None else fold) else p


#: the running kernel's home while one of its tool calls is judged (else ``$HERMES_HOME``)
_KERNEL_HOME: ContextVar[str | None] = ContextVar("hermes_kernel_home", default=None)


@contextmanager
def kernel_home(path: str | os.PathLike[str]) -> Iterator[None]:
    """Judge paths, within the block, with ``path`` as hermes's own home."""
    token = _KERNEL_HOME.set(os.fspath(path))
    try:
        yield
    finally:
        _KERNEL_HOME.reset(token)


def current_hermes_home() -> str | None:
    """The kernel's home when set by :func:`kernel_home`, else ``$HERMES_HOME``."""
    return _KERNEL_HOME.get() or os.environ.get("HERMES_HOME")


def classify(path: str, cwd: str | None = None, fold: bool | None = None) -> frozenset[str]:
    """The labels of ``path`` (empty for an ordinary file). ``fold``: judge names ignoring
    case (``~/.SSH/ID_RSA`` is a key); None: where the file system does (:func:`folds_case`)."""
    env_home = os.environ.get("HOME") or ""
    home = posixpath.normpath(env_home) if env_home.startswith("/") and env_home != "/" else None
    fold = folds_case() if fold is None else fold
    return _classify(path, cwd, home, _hermes_home(current_hermes_home(), home, fold), fold)


@lru_cache(maxsize=64)
def _hermes_home(value: str | None, home: str | None, fold: bool = False) -> str:
    """hermes's own home (else ``~/.hermes``), normalised like a path."""
    return normalise(value or "~/.hermes", None, home, fold)


def is_process_secret(path: str) -> bool:
    """Whether ``path`` is a process's environment or memory (``/proc/<pid>/environ``)."""
    return _PROCESS_SECRET.match(path) is not None


def is_secret_file(path: str, fold: bool | None = None) -> bool:
    """Whether the file at absolute ``path`` (symlinks already resolved) holds a secret that
    must not be read into the model's context: private keys, cloud and CLI credentials,
    hermes's own ``.env`` and ``auth.json``. Shared by the danger detector and the file tools."""
    return SECRET_FILE in classify(path, fold=fold)


@lru_cache(maxsize=4096)
def _classify(path: str, cwd: str | None, home: str | None, hermes: str,
              fold: bool = False) -> frozenset[str]:
    """The labels of ``path``; ``fold``: names compared ignoring case."""
    if not path or path.startswith(("-", "http:", "https:")):
        return frozenset()
    if "{" in path and _BRACE.search(path):  # {a,b} brace expansion: every variant counts
        return frozenset().union(*(_classify(v, cwd, home, hermes, fold)
                                   for v in expand_braces(path)))
    labels = _path_labels(path, cwd, home, hermes, fold)
    full = path if path.startswith("/") else posixpath.join(cwd, path) if cwd and not (
        path.startswith("~")) else ""
    if full.startswith("/proc/") and (m := _PROCESS_LINK.match(_fold_path(full))):
        labels |= _through_process(m.group(1), m.group(2) or "", home, hermes, fold)
    return labels


def _through_process(link: str, rest: str, home: str | None, hermes: str,
                     fold: bool) -> frozenset[str]:
    """The labels of ``rest`` reached through a process's ``root`` or ``cwd`` link:
    /proc/self/root/etc/shadow is /etc/shadow; below ``cwd``, a folder the command cannot know,
    the names are judged as if in the home folder and in hermes's home (where hermes, the
    commands' parent, may run): /proc/$PPID/cwd/.env may be hermes's keys. Above it (``..``
    first), anywhere: also from the root (/proc/$PPID/cwd/../../etc/... is /etc/...)."""
    if link == "root":
        return _classify(rest or "/", None, home, hermes, fold)
    names = rest.split("/")[1:]  # folded: the ``..`` steps come first
    climbs = next((k for k, name in enumerate(names) if name != ".."), len(names))
    bases = (HOME, hermes, "") if climbs else (HOME, hermes)
    rest = "/".join(["", *names[climbs:]])
    return frozenset().union(*(_classify(base + rest or "/", None, home, hermes, fold)
                               for base in bases)) - _FOLDER_LABELS


def _path_labels(path: str, cwd: str | None, home: str | None, hermes: str,
                 fold: bool) -> frozenset[str]:
    """The labels of ``path`` (no braces in it), tried against what a glob may match."""
    if _GLOB.search(path):
        pattern = normalise(path, cwd, home, fold)
        targets = _GLOB_TARGETS
        if fold:  # bash matches case under nocaseglob, and a plain part is found in any case
            pattern, targets, hermes = pattern.casefold(), _FOLDED_GLOB_TARGETS, hermes.casefold()
        matched = [t for t in targets if fnmatch.fnmatchcase(t, pattern)]
        if matched:
            return frozenset().union(*(_labels(t, hermes, fold) for t in matched))
        if pattern.startswith("/"):  # ~/.hermes/.en?, ~/.kub?/config: the files it may name
            files = [t for t in _file_targets(hermes) if fnmatch.fnmatchcase(t, pattern)]
            return frozenset().union(_labels(pattern, hermes, fold),
                                     *(_labels(t, hermes, fold) for t in files))
    return _labels(normalise(path, cwd, home, fold), hermes, fold)


@lru_cache(maxsize=8)
def _file_targets(hermes: str) -> tuple[str, ...]:
    """The well-known secret and start-up files a glob is tried against."""
    return (*(HOME + "/" + name for name in _HOME_FILES), hermes + "/.env",
            hermes + "/auth.json", "/etc/shadow", "/etc/gshadow", "/etc/passwd", "/etc/sudoers",
            "/proc/self/environ", "/proc/self/mem", "/proc/1/environ", "/proc/1/mem")


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


def _labels(p: str, hermes: str = HOME + "/.hermes", fold: bool = False) -> frozenset[str]:
    """The labels of the normalised path ``p``; ``fold``: names compared ignoring case (every
    name compared below is lower case but the system folders and ``Users``)."""
    system_dirs, system_trees, users = SYSTEM_DIRS, _SYSTEM_TREES, "Users"
    if fold:
        p, hermes = p.casefold(), hermes.casefold()
        system_dirs, system_trees, users = _FOLDED_SYSTEM_DIRS, _FOLDED_SYSTEM_TREES, "users"
    labels: set[str] = set()
    if p == "/":
        labels.add(ROOT)
    parts = p.split("/")
    if p == HOME or (len(parts) == 3 and parts[1] in ("home", users) and parts[2]):
        labels.add(HOME_DIR)
    if p in system_dirs:
        labels.add(SYSTEM_DIR)
    if p.startswith(system_trees) and not _OWN_FD.match(p):  # /proc/self/fd/1 is /dev/fd/1
        labels.add(SYSTEM_FILE)
    if p.startswith("/dev/"):
        if _SOCKET.match(p):
            labels.add(SOCKET)
        elif _DEVICE.match(p):
            labels.add(DEVICE)
    if p.startswith(("/etc/sudoers", "/private/etc/sudoers")) or p in (
            "/etc/passwd", "/etc/shadow", "/etc/group", "/etc/gshadow"):
        labels.add(SUDOERS)
    if _GIT_HOOK.search(p):
        labels.add(GIT_HOOK)  # code, or commands, that git runs later, unchecked
    name = original_name(parts[-1])  # a backup or copy of .env is judged as .env
    if (name in _CREDENTIAL_NAMES or any(d in _CREDENTIAL_DIRS for d in parts[:-1])
            or name in _CREDENTIAL_DIRS
            or (name.startswith(".env.") and name not in _ENV_TEMPLATES)
            or len(parts) > 3 and parts[1] in ("home", users)
            and "/".join(parts[3:]) in _HISTORIES):
        labels.add(CREDENTIAL)
    if name.endswith((".pem", ".key", ".p12", ".pfx", ".kdbx")):
        labels.add(KEY_FILE)  # a secret to send, but also what key generators write
    if name in _SHELL_RC and (name.startswith(".") or p.startswith("/etc/")) or (
            "/.config/fish/" in p and name.endswith(".fish")) or _RUNS_AT_START.search(p):
        labels.add(SHELL_RC)
    if p.startswith(hermes + "/"):
        top = p[len(hermes) + 1:].split("/", 1)[0].lower()
        if top in HERMES_STATE_TOPS or top.startswith("state.db"):
            labels.add(HERMES_STATE)
    if _holds_secret(p, parts, name, labels, hermes, users):
        labels.add(SECRET_FILE)
    if (p in ("/", "/home", HOME, "/" + users) or p in _SECRET_FOLDERS or name in _CREDENTIAL_DIRS
            or hermes == p or hermes.startswith(p + "/") or p == hermes + "/cache"
            or p.startswith("/proc") and (_PROCESS_DIR.match(p) or (
                (m := _PROCESS_FD.match(p)) is not None and not m.group(1)))):
        labels.add(SECRET_DIR)  # reading it recursively reads secrets
    return frozenset(labels)


def copy_bases(name: str) -> list[str]:
    """The names ``name`` may be a backup, swap file or copy of, nearest first:
    ``.env.bak~`` -> ``.env.bak``, ``.env``; ``..env.swp`` -> ``.env``; ``#config.yaml#`` ->
    ``config.yaml``; ``env.backup`` -> ``.env``. Empty when ``name`` is no such copy. The
    suffixes are matched in any case (``.env.BAK``); the name they decorate as spelled."""
    current = name
    if _UNDOTTED_ENV_COPY.fullmatch(current):
        return [".env"]
    bases: list[str] = []
    for _ in range(4):  # ``.env.bak~``, ``#.env.swp#``: a few layers at most
        swap = re.search(r"\.sw[a-p]$", current) is not None
        stripped = _COPY_SUFFIX.sub("", current)
        stripped = stripped[2:] if stripped.startswith(".#") else stripped.lstrip("#")
        if stripped in ("", current):
            break
        bases.append(stripped)
        if swap and stripped.startswith("."):
            bases.append(stripped[1:])  # vim's swap file of .env is ..env.swp
        current = bases[-1] if swap and stripped.startswith("..") else stripped
    return bases


def original_name(name: str) -> str:
    """The credential file ``name`` is a backup, swap file or copy of (``.env~``, ``#.env#``,
    ``..env.swp``, ``env.backup``, ``auth.json.bak``, ``shadow-`` -> ``.env``, ``auth.json``,
    ``shadow``); else ``name`` itself. Copies hold the same secrets, so they are judged as
    the file they copy."""
    if _is_credential_name(name):
        return name
    return next((base for base in copy_bases(name) if _is_credential_name(base)), name)


def _is_credential_name(name: str) -> bool:
    return (name in _CREDENTIAL_NAMES or name in ("shadow", "gshadow")
            or (name.startswith(".env.") and name not in _ENV_TEMPLATES))


def _holds_secret(p: str, parts: list[str], name: str, labels: set[str], hermes: str,
                  users: str = "Users") -> bool:
    """Whether reading the file ``p`` hands over a secret (see :func:`is_secret_file`); ``p``
    and ``hermes`` are already folded when case is ignored, and ``users`` is the name of the
    ``/Users`` folder as spelled there."""
    if name.endswith(".pub") or name in _ENV_TEMPLATES:
        return False
    if p.startswith("/proc/") and (_PROCESS_SECRET.match(p) or (
            (m := _PROCESS_FD.match(p)) is not None and m.group(1))):
        return True
    if p.startswith(hermes + "/"):  # cache/ holds the merged config, ${VAR}s expanded
        return (name in ("auth.json", ".env") or name.startswith(".env.") or KEY_FILE in labels
                or p[len(hermes) + 1:].split("/", 1)[0] == "cache")
    if ".ssh" in parts[:-1]:
        return name not in _SSH_PUBLIC
    if any(s in p if s.endswith("/") else p.endswith(s) for s in _CONFIG_SECRETS):
        return True
    if KEY_FILE in labels or name in ("shadow", "gshadow"):
        return True
    if CREDENTIAL not in labels or name in _PUBLIC_NAMES or name in _CREDENTIAL_DIRS:
        return False
    if name in _HOME_ONLY_SECRETS or name.startswith(".env."):
        return len(parts) == 4 and parts[1] in ("home", users)  # ~/.env, not a project's
    return True


def link_target(path: str, cwd: str | None) -> str | None:
    """Where the existing symlink ``path`` (or a link among its parents) leads, or None: a
    write through ``notes.txt -> ~/.bashrc`` or ``disk -> /dev/sda`` reaches the target."""
    if any(c < " " for c in path) or _GLOB.search(path):
        return None
    try:
        path = os.path.expanduser(path)
        if (not path.startswith("/") and not (cwd and cwd.startswith("/"))) or path.startswith(
                ("/dev/", "/proc/", "~")):
            return None
        full = posixpath.normpath(posixpath.join(cwd or "/", path))
        real = os.path.realpath(full)
    except (OSError, ValueError):
        return None
    return real if real != full and not real.startswith("/proc/") else None


def is_protected_dir(labels: frozenset[str]) -> bool:
    """The root, the home directory or a system directory itself (or all of its contents)."""
    return bool(labels & {ROOT, HOME_DIR, SYSTEM_DIR})

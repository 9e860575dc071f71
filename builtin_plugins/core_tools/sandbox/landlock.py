"""The Landlock runner: a command confined by a :class:`~.policy.SandboxPolicy` through the
kernel's Landlock LSM (ABI 3+: Linux 6.2+), where bubblewrap is absent or cannot start.

The ruleset is built in hermes (``landlockpy``'s bindings: the rights the kernel lacks are
dropped and :func:`landlock_abi` says which ABI is in use), once per policy and again when a
folder it was built from changes, and enforced in the child between fork and exec
(:meth:`LandlockLaunch.preexec`: two syscalls, plus the capability drop when hermes runs as
root), so nothing but the command itself starts.

What the ruleset allows:

- writes (create, delete, rename, truncate, link) only in the writable roots and a private
  temporary folder made for the command (``$TMPDIR``, removed when it ends);
- reads and execution everywhere but the hidden paths, the host's ``/tmp`` and ``/dev``
  (but for ``null``, ``zero``, ``full``, ``random``, ``urandom``, ``tty``): Landlock only
  allows, so the readable set is the complement of those, computed by splitting each folder
  on the way down to a hidden path into its other entries (``~`` -> ``~/proj``, ``~/docs``,
  ... without ``~/.ssh``); the folders' listings stay readable (``ls ~/.ssh`` shows names);
- with ``network: false`` (ABI 4+) no TCP ``bind``/``connect``; UDP and Unix sockets stay
  open (ABI 10's UDP and ABI 9's Unix socket rights are not used yet);
- ptrace of, and ``/proc/PID/environ`` or ``mem`` of, hermes and every process outside the
  sandbox are refused by Landlock itself; from ABI 6 also signals to them and their abstract
  Unix sockets. Unix socket files (docker's) stay reachable.

As root, every capability is dropped too (bounding, inheritable and ambient sets), so that
after exec the command holds none: no ``sethostname``, no raw device, no ``CAP_DAC_*``.
Landlock itself refuses ``mount``/``umount`` to a confined process.
"""

from __future__ import annotations

import atexit
import ctypes
import errno
import functools
import os
import shutil
import tempfile
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .bwrap import SSH_PUBLIC
from .policy import SandboxPolicy

#: what to install when the binding is missing (a pure-Python wheel, no dependency)
LANDLOCK_FIX = "`pip install landlockpy` (a dependency of hermes on Linux: reinstall hermes)"
#: devices a command may read and write (everything else under /dev is unreadable)
HARMLESS_DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom",
                    "/dev/tty")
#: the folder of a ruleset's commands' private temporary folders: TMP_PREFIX<hermes pid>-...
TMP_PREFIX = "hermes-landlock-"
#: below ABI 3 truncate(2) is not controlled: a command could empty any file it may open
MIN_ABI = 3
#: never readable as a whole: the host's temporary files and the devices
UNREADABLE_TREES = ("/tmp", "/dev")

# prctl(2) options and the capget/capset header version (linux/prctl.h, linux/capability.h)
PR_CAPBSET_DROP = 24
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
LINUX_CAPABILITY_VERSION_3 = 0x20080522


def _binding() -> Any:
    import landlockpy  # type: ignore[import-not-found,import-untyped,unused-ignore]

    return landlockpy


@functools.lru_cache(maxsize=1)
def landlock_abi() -> tuple[int, str]:
    """The kernel's Landlock ABI (0: none) and, for 0, why and how to fix it."""
    try:
        binding = _binding()
    except ImportError:
        return 0, f"the Landlock binding is not installed: {LANDLOCK_FIX}"
    try:
        abi = int(binding.abi_version())
    except OSError as exc:
        return 0, f"Landlock cannot be queried here: {exc}"
    if abi < 1:
        return 0, ("the kernel has no Landlock (Linux 6.2+ with `landlock` in the lsm= boot "
                   "parameter or CONFIG_LSM)")
    if abi < MIN_ABI:
        return 0, (f"the kernel's Landlock ABI {abi} cannot stop truncate(2) (files outside the "
                   f"workspace could be emptied): hermes needs ABI {MIN_ABI} (Linux 6.2+)")
    return abi, ""


def read_roots(excluded: Iterable[Path]) -> list[Path]:
    """The smallest set of paths whose trees cover everything but ``excluded`` (resolved
    paths): ``/`` split, folder by folder, on the way down to each excluded path. A folder
    that cannot be listed is left out whole (fail closed); symbolic links are left out (what
    they point to is judged where it is)."""
    roots: set[Path] = {Path("/")}
    for path in sorted({Path(p) for p in excluded if os.path.lexists(p)}):  # parents first
        cover = next((up for up in (path, *path.parents) if up in roots), None)
        if cover is None:
            continue  # already inside an excluded tree
        roots.discard(cover)
        node = cover
        for part in path.relative_to(cover).parts:
            try:
                entries = list(os.scandir(node))
            except OSError:
                break  # unlistable: leave the whole folder out
            roots.update(Path(entry.path) for entry in entries
                         if entry.name != part and not entry.is_symlink())
            node = node / part
    return sorted(roots)


@dataclass
class _Built:
    """A ruleset built for one policy, reused while what it was built from is unchanged
    (``stamp``), with the folder its commands' private temporary folders are made in."""

    ruleset: Any
    tmp_root: Path
    watched: tuple[tuple[str, bool], ...]  # (path, whether its mtime counts)
    stamp: tuple[Any, ...]
    users: int = 0
    retired: bool = False

    def release(self) -> None:
        self.ruleset.close()
        shutil.rmtree(self.tmp_root, ignore_errors=True)


@dataclass
class LandlockLaunch:
    """One command's ruleset and private temporary folder; ``preexec`` enforces the ruleset
    in the child, ``close`` removes the folder once the command has ended."""

    built: _Built
    tmpdir: Path
    abi: int
    drop_caps: bool
    cap_last: int = 40
    _closed: bool = field(default=False, repr=False)

    def preexec(self) -> None:
        """Runs in the child between fork and exec: no import, no lock, only syscalls."""
        if self.drop_caps:
            _drop_capabilities(self.cap_last)
        self.built.ruleset.restrict()  # sets no_new_privs first (no setuid gain after exec)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        shutil.rmtree(self.tmpdir, ignore_errors=True)
        with _cache_lock:
            self.built.users -= 1
            if self.built.retired and not self.built.users:
                self.built.release()


#: rulesets by policy: building one lists the folders on the way to each hidden path and
#: adds a rule per entry (a few milliseconds); enforcing a built one costs two syscalls
_cache: dict[tuple[Any, ...], _Built] = {}
_cache_lock = threading.Lock()
_CACHE_SIZE = 8


def landlock_launch(policy: SandboxPolicy) -> LandlockLaunch:
    """The ruleset of ``policy`` (confined) and a fresh private temporary folder."""
    key = (policy.writable, policy.hidden, policy.shown, policy.network)
    with _cache_lock:
        built = _cache.get(key)
        if built is not None and built.stamp != _stamp(built.watched):
            _retire(_cache.pop(key))
            built = None
        if built is None:
            if len(_cache) >= _CACHE_SIZE:
                _retire(_cache.pop(next(iter(_cache))))
            built = _cache[key] = _build(policy)
        built.users += 1
    try:
        tmpdir = Path(tempfile.mkdtemp(prefix="cmd-", dir=built.tmp_root))
    except BaseException:
        with _cache_lock:
            built.users -= 1
        raise
    abi = int(built.ruleset.abi_version)
    return LandlockLaunch(built, tmpdir, abi, os.geteuid() == 0, _cap_last())


def _retire(built: _Built) -> None:
    built.retired = True
    if not built.users:
        built.release()


@atexit.register
def _release_all() -> None:
    with _cache_lock:
        while _cache:
            _retire(_cache.popitem()[1])


def _watched(policy: SandboxPolicy, excluded: list[Path]) -> tuple[tuple[str, bool], ...]:
    """What a built ruleset depends on: the folders split on the way to each excluded path
    (an entry added there is not covered yet: their mtimes), whether each excluded path and
    writable root is there and the same, and ``.ssh`` (its public files are rules)."""
    watched: dict[str, bool] = {}
    for path in excluded:
        for up in path.parents:
            watched[str(up)] = True
        watched.setdefault(str(path), path.name == ".ssh")
    for path in (*policy.writable, *policy.shown):
        watched.setdefault(str(path), False)
    return tuple(sorted(watched.items()))


def _stamp(watched: tuple[tuple[str, bool], ...]) -> tuple[Any, ...]:
    found: list[Any] = []
    for path, with_mtime in watched:
        try:
            st = os.lstat(path)
        except OSError:
            found.append(None)
            continue
        found.append((st.st_dev, st.st_ino, st.st_mtime_ns if with_mtime else 0))
    return tuple(found)


def _build(policy: SandboxPolicy) -> _Built:
    binding = _binding()
    fs, net, scope = binding.AccessFS, binding.AccessNet, binding.Scope
    read = fs.READ_FILE | fs.EXECUTE
    write = (fs.WRITE_FILE | fs.TRUNCATE | fs.REMOVE_DIR | fs.REMOVE_FILE | fs.MAKE_DIR
             | fs.MAKE_REG | fs.MAKE_SOCK | fs.MAKE_FIFO | fs.MAKE_SYM | fs.REFER)
    # Handled (refused unless a rule allows it), named rather than "all the binding knows",
    # so that newer kernels behave as ABI 7 does here: ABI 9's RESOLVE_UNIX (connect to a
    # Unix socket file) and ABI 10's UDP rights are not used; the status says so.
    handled_fs = (read | write | fs.READ_DIR | fs.MAKE_CHAR | fs.MAKE_BLOCK | fs.IOCTL_DEV)
    handled_net = net.NONE if policy.network else net.BIND_TCP | net.CONNECT_TCP
    excluded = [*policy.hidden, *(Path(tree) for tree in UNREADABLE_TREES)]
    watched = _watched(policy, excluded)
    stamp = _stamp(watched)  # before the rules: a change while they are added shows next time
    _sweep_orphans()
    tmp_root = Path(tempfile.mkdtemp(prefix=f"{TMP_PREFIX}{os.getpid()}-"))
    ruleset = binding.Ruleset(handled_fs=handled_fs, handled_net=handled_net,
                              scoped=scope.ABSTRACT_UNIX_SOCKET | scope.SIGNAL)
    try:
        ruleset.allow_path("/", fs.READ_DIR)  # listings everywhere (names, not contents)
        hidden = [path for path in policy.hidden if os.path.lexists(path)]
        for root in read_roots(excluded):
            _allow_if_there(ruleset, root, read)  # listed a moment ago: it may be gone
        for root in policy.writable:
            if root.is_dir() and not policy.is_hidden(root):
                _allow_outside(ruleset, root, read | write | fs.READ_DIR, hidden, read_roots)
        ruleset.allow_path(tmp_root, read | write | fs.READ_DIR)
        for device in HARMLESS_DEVICES:
            if os.path.exists(device):
                ruleset.allow_path(device, fs.READ_FILE | fs.WRITE_FILE | fs.TRUNCATE
                                   | fs.IOCTL_DEV)
        for path in _shown(policy):
            ruleset.allow_path(path, read | (fs.READ_DIR if path.is_dir() else fs.NONE))
    except BaseException:
        ruleset.close()
        shutil.rmtree(tmp_root, ignore_errors=True)
        raise
    return _Built(ruleset, tmp_root, watched, stamp)


def _sweep_orphans() -> None:
    """Remove the temporary folders of hermes processes that died without removing them
    (SIGKILL): ``TMP_PREFIX<pid>-...`` of a pid that no longer runs, owned by this user."""
    for folder in Path(tempfile.gettempdir()).glob(f"{TMP_PREFIX}*-*"):
        pid = folder.name[len(TMP_PREFIX):].split("-", 1)[0]
        try:
            if not pid.isdigit() or folder.lstat().st_uid != os.geteuid():
                continue
            os.kill(int(pid), 0)
        except ProcessLookupError:
            shutil.rmtree(folder, ignore_errors=True)
        except OSError:
            continue  # alive (EPERM: another user's), or gone meanwhile


def _allow_if_there(ruleset: Any, path: Path, rights: Any) -> None:
    try:
        ruleset.allow_path(path, rights)
    except (FileNotFoundError, NotADirectoryError):
        pass  # removed since it was listed: nothing to allow


def _allow_outside(ruleset: Any, root: Path, rights: Any, hidden: list[Path],
                   split: Any) -> None:
    """``rights`` on ``root``, but for the hidden paths inside it: their write rights stay
    (Landlock cannot take a right back beneath a rule), their reads are left out by granting
    reads to ``root``'s other entries only."""
    inside = [path for path in hidden if path != root and root in path.parents]
    if not inside:
        ruleset.allow_path(root, rights)
        return
    binding = _binding()
    read = binding.AccessFS.READ_FILE | binding.AccessFS.EXECUTE
    ruleset.allow_path(root, rights & ~read)
    for sub in split(inside):
        if sub == root or root in sub.parents:
            _allow_if_there(ruleset, sub, read)


def _shown(policy: SandboxPolicy) -> list[Path]:
    """Readable again inside hidden folders: ``policy.shown`` and ``.ssh``'s public files."""
    found = [path for path in policy.shown if path.is_dir() and not path.is_symlink()]
    for hidden in policy.hidden:
        if hidden.name == ".ssh" and hidden.is_dir() and not hidden.is_symlink():
            found += sorted(f for pattern in SSH_PUBLIC for f in hidden.glob(pattern)
                            if f.is_file() and not f.is_symlink())
    return found


@functools.lru_cache(maxsize=1)
def _cap_last() -> int:
    try:
        return int(Path("/proc/sys/kernel/cap_last_cap").read_text())
    except (OSError, ValueError):
        return 63


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                ("inheritable", ctypes.c_uint32)]


_libc = ctypes.CDLL(None, use_errno=True)
_EMPTY_CAPS = (_CapData * 2)()
_CAP_HEADER = _CapHeader(LINUX_CAPABILITY_VERSION_3, 0)


def _drop_capabilities(last: int) -> None:
    """Empty the bounding set (no capability can come back at exec, also for uid 0), the
    ambient set, and the effective, permitted and inheritable sets. Raises on failure, so
    that the command does not start (fail closed)."""
    for cap in range(last + 1):
        if _libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            _raise("PR_CAPBSET_DROP")
    if _libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0:
        if ctypes.get_errno() != errno.EINVAL:  # EINVAL: a kernel without ambient sets
            _raise("PR_CAP_AMBIENT")
    if _libc.capset(ctypes.byref(_CAP_HEADER), _EMPTY_CAPS) != 0:
        _raise("capset")


def _raise(what: str) -> None:
    err = ctypes.get_errno()
    raise OSError(err, f"{what}: {os.strerror(err)}")

"""Background processes: ``terminal`` with ``background: true`` starts one, the ``process``
tool (:mod:`.process_tool`) watches, feeds and stops it.

Each process runs ``bash -c CMD`` under the argv the foreground terminal uses
(:func:`.terminal.command_argv`: the same sandbox), in its own process group, stdin a pipe
(``write``/``submit``/``close``), stdout and stderr merged. A reader thread copies the output
into a bounded in-memory :class:`Ring` (what ``poll`` and ``wait`` show) and into a log file
under ``$HERMES_HOME/processes/`` (what ``log`` pages), rotated once it holds
``terminal.background_max_log_bytes`` (the previous part kept as ``ID.log.1``).

Lifetime: a process belongs to the session that started it (and to that session's
continuations after compression) and is killed when the session ends or hermes exits. A
kept one (``keep: true``) is not: its output goes straight into its log file (no pipe to
hermes, so no stdin), a small ``sh`` keeper waits for it and writes its exit status next to
the log, and its record (``ID.json``) is what ``hermes processes`` lists (:mod:`.kept`).

Children that must live longer than the tool call are started from one long-lived thread
(:class:`Spawner`): Linux's parent-death signal (ours and bubblewrap's ``--die-with-parent``)
fires when the *thread* that forked them ends.
"""

from __future__ import annotations

import os
import queue
import secrets
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, TypeVar

from . import kept
from .process_groups import ProcessGroups, kill_tree
from .sandbox.runner import Launch, SandboxUnavailable

RING_BYTES = 1 << 20  # per process, in memory
CHUNK = 65536
TAIL_EVERY = 0.05  # seconds between reads of a kept process's log file

T = TypeVar("T")


class Spawner:
    """One daemon thread that runs every ``Popen`` whose child must outlive the caller's
    thread (see the module's docstring)."""

    def __init__(self) -> None:
        self._jobs: queue.Queue[tuple[Callable[[], Any], Future[Any]]] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def run(self, job: Callable[[], T]) -> T:
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._loop, name="hermes-spawner",
                                                daemon=True)
                self._thread.start()
        done: Future[T] = Future()
        self._jobs.put((job, done))
        return done.result()

    def _loop(self) -> None:
        while True:
            job, done = self._jobs.get()
            try:
                done.set_result(job())
            except BaseException as exc:  # handed to the caller
                done.set_exception(exc)


SPAWNER = Spawner()


class Ring:
    """The last ``size`` bytes of a stream, addressed by absolute offsets (``total`` bytes
    have been fed so far; ``start`` is the offset of the oldest byte still kept)."""

    def __init__(self, size: int = RING_BYTES):
        self.size = size
        self.buf = bytearray()
        self.start = 0
        self.total = 0
        self.changed = threading.Condition()
        self.closed = False  # the stream ended

    def feed(self, data: bytes) -> None:
        with self.changed:
            self.buf += data
            self.total += len(data)
            extra = len(self.buf) - self.size
            if extra > 0:
                del self.buf[:extra]
                self.start += extra
            self.changed.notify_all()

    def close(self) -> None:
        with self.changed:
            self.closed = True
            self.changed.notify_all()

    def since(self, offset: int, limit: int) -> tuple[bytes, int, int]:
        """``(data, skipped, end)``: at most the last ``limit`` bytes fed after ``offset``,
        how many new bytes are not in ``data`` (dropped from the ring or over ``limit``),
        and the offset to ask from next time."""
        with self.changed:
            begin = max(offset, self.start)
            data = bytes(self.buf[begin - self.start:])
            end = self.total
        skipped = begin - offset
        if len(data) > limit:
            skipped += len(data) - limit
            data = data[len(data) - limit:]
        return data, skipped, end


class LogFile:
    """The on-disk log of one process: ``path`` and, once rotated, ``path.1`` (the part
    before). ``rotated`` counts the bytes of parts deleted since."""

    def __init__(self, path: Path, cap: int):
        self.path, self.cap = path, max(cap, 4096)
        self.rotated = 0
        self._file: IO[bytes] | None = None
        self._size = 0

    def write(self, data: bytes) -> None:
        if self._file is None:
            self._file = open(self.path, "ab")
            self._size = self._file.tell()
        self._file.write(data)
        self._file.flush()
        self._size += len(data)
        if self._size >= self.cap:
            self._file.close()
            self._file = None
            self.rotate()

    def rotate(self) -> None:
        older = self.older
        if older.exists():
            self.rotated += older.stat().st_size
        os.replace(self.path, older)

    @property
    def older(self) -> Path:
        return self.path.with_name(self.path.name + ".1")

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def read(self) -> bytes:
        """Both parts, oldest first (at most twice the cap)."""
        parts = []
        for part in (self.older, self.path):
            try:
                parts.append(part.read_bytes())
            except FileNotFoundError:
                pass
        return b"".join(parts)

    def remove(self) -> None:
        self.close()
        for part in (self.path, self.older):
            part.unlink(missing_ok=True)


@dataclass
class Proc:
    id: str
    command: str
    cwd: str
    owner: str  # the session that started it ("" when called without one)
    keep: bool
    popen: subprocess.Popen[bytes]
    log: LogFile
    ring: Ring = field(default_factory=Ring)
    started: float = field(default_factory=time.time)
    ended: float | None = None
    exit_code: int | None = None
    killed_by: str = ""  # "kill", "session end", ...
    cursor: int = 0  # where the last poll stopped
    stdin_open: bool = True
    sandbox: str = ""  # the note of how it is confined
    launched: Launch | None = None  # closed when it ends (Landlock's temporary folder)

    @property
    def pid(self) -> int:
        return self.popen.pid

    @property
    def running(self) -> bool:
        return self.ended is None

    def status(self) -> str:
        if self.running:
            return "running"
        return "killed" if self.killed_by else "exited"


def new_id() -> str:
    return "proc_" + secrets.token_hex(6)


class Processes:
    """The background processes of one kernel."""

    def __init__(self, home: Path, log_cap: Callable[[], int],
                 lineage: Callable[[str], Iterable[str]]):
        self.dir = home / "processes"
        self.log_cap = log_cap
        self._lineage = lineage  # a session's compression ancestors, newest first
        self._ancestors: dict[str, tuple[str, ...]] = {}
        self.groups = ProcessGroups()  # the ones that die with hermes
        self._procs: dict[str, Proc] = {}
        self._lock = threading.Lock()

    # --- starting ----------------------------------------------------------------------
    def start(self, command: str, how: Launch, cwd: Path, owner: str,
              keep: bool = False) -> Proc:
        """Start ``how`` (from :func:`.terminal.command_launch`); it is closed once the
        process has ended."""
        self.dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        proc_id = new_id()
        log = LogFile(self.dir / f"{proc_id}.log", self.log_cap())
        try:
            if keep:
                popen = _start_kept(how, cwd, log.path, kept.exit_path(log.path))
            else:
                popen = SPAWNER.run(lambda: subprocess.Popen(
                    how.argv, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT, start_new_session=True, env=how.env,
                    preexec_fn=how.preexec_fn))
                self.groups.add(popen)
        except BaseException:
            how.close()
            raise
        proc = Proc(proc_id, command, str(cwd), owner, keep, popen, log, stdin_open=not keep,
                    launched=how)
        if keep:
            kept.write_record(self.dir, proc_id, command, str(cwd), popen.pid, owner)
        with self._lock:
            self._procs[proc_id] = proc
        reader = _tail_file if keep else _pump
        threading.Thread(target=reader, args=(proc,), daemon=True,
                         name=f"hermes-{proc_id}-output").start()
        threading.Thread(target=self._reap, args=(proc,), daemon=True,
                         name=f"hermes-{proc_id}-exit").start()
        return proc

    def _reap(self, proc: Proc) -> None:
        code: int | None = proc.popen.wait()
        if proc.keep:
            code = kept.read_exit(proc.log.path, code)
        proc.exit_code, proc.ended = code, time.time()
        self.groups.discard(proc.popen)
        if proc.launched is not None:
            proc.launched.close()
        with proc.ring.changed:
            proc.ring.changed.notify_all()

    # --- finding -----------------------------------------------------------------------
    def visible(self, session: str) -> list[Proc]:
        """The processes of ``session`` and of the sessions it continues (compression);
        every process when called without a session."""
        with self._lock:
            procs = list(self._procs.values())
        if not session:
            return procs
        owners = {session, ""}
        if any(proc.owner not in owners for proc in procs):  # the store only when needed
            owners.update(self.ancestors(session))
        return [proc for proc in procs if proc.owner in owners]

    def ancestors(self, session: str) -> tuple[str, ...]:
        if session not in self._ancestors:
            try:
                found = tuple(self._lineage(session))
            except Exception:  # no session store: the session alone
                found = ()
            if not found:  # not yet stored: ask again next time
                return found
            self._ancestors[session] = found
        return self._ancestors[session]

    def get(self, proc_id: str, session: str) -> Proc | None:
        return next((proc for proc in self.visible(session) if proc.id == proc_id), None)

    # --- stopping ----------------------------------------------------------------------
    def kill(self, proc: Proc, why: str = "kill", grace: float = 3.0) -> None:
        """SIGTERM the whole group (and every descendant that left it), SIGKILL what is
        still there after ``grace`` seconds."""
        if proc.running:
            proc.killed_by = why
            kill_tree(proc.pid, signal.SIGTERM)
            deadline = time.monotonic() + grace
            while proc.running and time.monotonic() < deadline:
                time.sleep(0.02)
            if proc.running:
                kill_tree(proc.pid, signal.SIGKILL)
                try:
                    proc.popen.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    pass
        if proc.keep:
            kept.remove_record(self.dir, proc.id)
        self.close_stdin(proc)

    def close_stdin(self, proc: Proc) -> None:
        proc.stdin_open = False
        if proc.popen.stdin is not None:
            try:
                proc.popen.stdin.close()
            except OSError:
                pass

    def forget(self, proc: Proc) -> None:
        with self._lock:
            self._procs.pop(proc.id, None)
        if not proc.keep:
            proc.log.remove()

    def end_session(self, session: str) -> int:
        """Kill and forget the session's processes but the kept ones; returns how many."""
        ended = [proc for proc in self.visible(session) if not proc.keep and proc.owner]
        for proc in ended:
            self.kill(proc, "session end", grace=1.0)
            self.forget(proc)
        return len(ended)

    def kill_all(self) -> None:
        """hermes exits: kill every process but the kept ones (those keep running)."""
        with self._lock:
            procs = [proc for proc in self._procs.values() if not proc.keep]
        for proc in procs:
            kill_tree(proc.pid, signal.SIGKILL)
        self.groups.kill_all()
        for proc in procs:
            self.forget(proc)


def _pump(proc: Proc) -> None:
    """Copy the pipe into the ring and the log until the last writer closes it."""
    stream = proc.popen.stdout
    assert stream is not None
    read = getattr(stream, "read1", stream.read)
    try:
        while chunk := read(CHUNK):
            proc.ring.feed(chunk)
            try:
                proc.log.write(chunk)
            except OSError:  # the disk is full: the ring still has the tail
                pass
    except (OSError, ValueError):
        pass
    finally:
        proc.log.close()
        proc.ring.close()
        stream.close()


def _tail_file(proc: Proc) -> None:
    """A kept process writes its log itself: follow the file, and rotate it (copy, then
    truncate: the writer appends) when it passes the cap."""
    position = 0
    while True:
        try:
            with open(proc.log.path, "rb") as file:
                size = os.fstat(file.fileno()).st_size
                if size < position:  # truncated by a rotation
                    position = 0
                file.seek(position)
                while chunk := file.read(CHUNK):
                    proc.ring.feed(chunk)
                    position += len(chunk)
            if position >= proc.log.cap:
                _copy_truncate(proc.log)
                position = 0
        except FileNotFoundError:
            pass
        if not proc.running and position >= _size(proc.log.path):
            proc.ring.close()
            return
        time.sleep(TAIL_EVERY)


def _copy_truncate(log: LogFile) -> None:
    if log.older.exists():
        log.rotated += log.older.stat().st_size
    with open(log.path, "rb") as source, open(log.older, "wb") as target:
        while chunk := source.read(1 << 20):
            target.write(chunk)
    os.truncate(log.path, 0)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


def _start_kept(how: Launch, cwd: Path, log: Path,
                exit_file: Path) -> subprocess.Popen[bytes]:
    """``sh`` waits for the command and writes its status to ``exit_file``; it is not tied
    to hermes (no parent-death signal), and the sandbox's ``--die-with-parent`` ties the
    command to it. The keeper's group is the command's: killing it kills both. Landlock
    confines the process that applies it and everything it starts, the keeper included,
    which could then not write its status: a kept process needs bubblewrap (or none)."""
    if how.mechanism == "landlock":
        raise SandboxUnavailable("keep: true needs the bubblewrap sandbox (under Landlock the "
                                 "process cannot outlive hermes confined); run it without "
                                 "keep, or install bubblewrap")
    keeper = ['/bin/sh', '-c', '"$@"; echo $? > "$HERMES_EXIT_FILE"', "hermes-keeper", *how.argv]
    with open(log, "ab") as out:
        return subprocess.Popen(keeper, cwd=cwd, stdin=subprocess.DEVNULL, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True,
                                env={**(how.env or {}), "HERMES_EXIT_FILE": str(exit_file)})

"""When checkpoints are taken: before the first file-changing tool call (``write_file``,
``patch``, ``terminal``) of each turn, in the session's workspace, if ``checkpoints.enabled``.

A ``terminal`` call is checkpointed whatever the command: telling a command that writes from
one that does not is the analyser's guess, and a checkpoint with nothing changed costs one
``git add``. A failure to checkpoint is logged and never stops the tool call.
"""

from __future__ import annotations

import fcntl
import logging
import shutil
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .shadow import Checkpoint, CheckpointError, ShadowRepo, repo_dir

if TYPE_CHECKING:
    from hermes_agent import Kernel
    from hermes_agent.api import ToolCallContext

log = logging.getLogger(__name__)

#: pruning runs when this many checkpoints more than ``max_snapshots`` have piled up
PRUNE_SLACK = 10


@contextmanager
def repo_lock(repo: ShadowRepo) -> Iterator[None]:
    """One writer per shadow repository, across threads and processes (the gateway's turns
    and a chat in the same folder)."""
    repo.git_dir.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    with open(repo.git_dir.with_suffix(".lock"), "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


class Checkpointer:
    """The checkpoints of one kernel's sessions."""

    def __init__(self, kernel: "Kernel"):
        self.kernel = kernel
        self._turns: dict[tuple[str, str], str] = {}  # (session, cwd) -> turn checkpointed
        self._too_big: set[Path] = set()
        self._lock = threading.Lock()

    def setting(self, key: str, default: Any) -> Any:
        value = self.kernel.config.get(f"checkpoints.{key}")
        return default if value is None else value

    @property
    def enabled(self) -> bool:
        return bool(self.setting("enabled", True))

    def repo(self, workspace: Path) -> ShadowRepo:
        return ShadowRepo(Path(self.kernel.home), workspace,
                          max_file_bytes=int(self.setting("max_file_size_mb", 10) * 1_000_000))

    def before(self, tool: str, ctx: "ToolCallContext",
               workspace_of: Callable[[], Path | None]) -> None:
        """Called before a tool call runs: checkpoint once per turn and folder. The workspace
        (``workspace_of()``: the sandbox's, None for none) is worked out only for a turn's
        first call."""
        if not self.enabled:
            return
        key = (ctx.session_id or ctx.task_id, str(ctx.cwd))
        with self._lock:  # one entry per session and folder: its latest checkpointed turn
            if self._turns.get(key) == ctx.turn_id:
                return
            self._turns[key] = ctx.turn_id
        workspace = workspace_of()
        if workspace is None or workspace in self._too_big:
            return
        try:
            self.take(workspace, session_id=ctx.session_id, turn_id=ctx.turn_id, tool=tool)
        except (CheckpointError, OSError, ValueError) as exc:
            log.warning("no checkpoint of %s before %s: %s", workspace, tool, exc)

    def take(self, workspace: Path, *, session_id: str, turn_id: str,
             tool: str) -> Checkpoint | None:
        repo = self.repo(workspace)
        with repo_lock(repo):
            if not repo.exists and not self._small_enough(repo):
                return None
            made = repo.snapshot(session_id=session_id, turn_id=turn_id, tool=tool)
            keep = int(self.setting("max_snapshots", 50))
            if made is not None and len(repo.git("rev-list", "HEAD").split()) > keep + PRUNE_SLACK:
                repo.prune(keep)
            return made

    def _small_enough(self, repo: ShadowRepo) -> bool:
        """A workspace with more files than ``checkpoints.max_files`` (a home folder's worth,
        an unignored dependency tree) is not checkpointed; said once in the log."""
        limit = int(self.setting("max_files", 50_000))
        repo.init()
        count = repo.git("ls-files", "-z", "--others", "--exclude-standard").count("\0")
        if count <= limit:
            return True
        shutil.rmtree(repo.git_dir, ignore_errors=True)
        with self._lock:
            self._too_big.add(repo.workspace)
        log.warning("no checkpoints of %s: it holds %d files, more than checkpoints.max_files "
                    "(%d); raise it in config.yaml or ignore folders in .gitignore",
                    repo.workspace, count, limit)
        return False


def workspaces(home: Path) -> list[Path]:
    """Every workspace that has checkpoints under ``home``."""
    found = []
    for marker in sorted((home / "checkpoints").glob("*/workspace")):
        path = Path(marker.read_text(encoding="utf-8").strip())
        if repo_dir(home, path) == marker.parent:
            found.append(path)
    return found

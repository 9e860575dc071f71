"""A workspace's checkpoints, kept in a shadow git repository outside it.

The repository's git directory is under ``$HERMES_HOME/checkpoints/`` (hidden from the
agent's commands and file tools, so a model cannot rewrite its own undo history); its work
tree is the workspace. The user's own ``.git`` is never read or written: git never tracks a
path named ``.git``, and every command runs with our git directory and no user or system git
config, hooks or attributes filters.

A checkpoint is a commit of the workspace as it was, taken only when something changed since
the last one. Files the workspace's ``.gitignore`` files ignore, the usual dependency and
build folders, and files over a size limit are left out.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

#: left out of every checkpoint besides what the workspace's .gitignore files ignore
DEFAULT_EXCLUDES = ("node_modules/", ".venv/", "venv/", "__pycache__/", ".tox/", ".mypy_cache/",
                    ".pytest_cache/", "*.pyc", ".DS_Store")
_SUBJECT = "hermes checkpoint"


class CheckpointError(RuntimeError):
    """A git command of the shadow repository failed; the message says which and why."""


@dataclass(frozen=True)
class Checkpoint:
    commit: str
    created: float  # unix time
    session_id: str
    turn_id: str
    tool: str  # the tool call the checkpoint was taken before
    files: int  # files the checkpoint holds

    @property
    def short(self) -> str:
        return self.commit[:10]


def repo_dir(home: Path, workspace: Path) -> Path:
    """Where the shadow repository of ``workspace`` lives: one per workspace path."""
    digest = hashlib.sha256(str(workspace).encode("utf-8", "surrogateescape")).hexdigest()[:16]
    return home / "checkpoints" / f"{workspace.name or 'root'}-{digest}"


class ShadowRepo:
    """Git plumbing on one workspace's shadow repository."""

    def __init__(self, home: Path, workspace: Path, *, max_file_bytes: int = 10_000_000):
        self.workspace = workspace
        self.git_dir = repo_dir(home, workspace)
        self.max_file_bytes = max_file_bytes

    # --- git --------------------------------------------------------------------------------
    def _env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        env.update(GIT_DIR=str(self.git_dir), GIT_WORK_TREE=str(self.workspace),
                   GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull,
                   GIT_AUTHOR_NAME="hermes", GIT_AUTHOR_EMAIL="hermes@localhost",
                   GIT_COMMITTER_NAME="hermes", GIT_COMMITTER_EMAIL="hermes@localhost",
                   GIT_TERMINAL_PROMPT="0", LC_ALL="C")
        return env

    def git(self, *args: str, input: bytes | None = None, check: bool = True) -> str:
        done = subprocess.run(["git", "-c", "core.hooksPath=" + os.devnull, *args],
                              cwd=self.workspace, env=self._env(), input=input,
                              capture_output=True, timeout=120)
        if check and done.returncode != 0:
            error = done.stderr.decode(errors="replace").strip().splitlines()
            raise CheckpointError(f"git {args[0]} failed in the checkpoint repository "
                                  f"{self.git_dir}: {error[-1] if error else done.returncode}")
        return done.stdout.decode("utf-8", "surrogateescape")

    @property
    def exists(self) -> bool:
        return (self.git_dir / "HEAD").is_file()

    def init(self) -> None:
        self.git_dir.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        env = self._env()
        del env["GIT_WORK_TREE"]
        subprocess.run(["git", "init", "-q"], cwd=self.git_dir.parent, env=env, check=True,
                       capture_output=True)
        for key, value in (("core.bare", "false"), ("core.autocrlf", "false"),
                           ("core.symlinks", "true"), ("core.fsmonitor", "false"),
                           ("gc.auto", "0"), ("commit.gpgsign", "false")):
            self.git("config", key, value)
        (self.git_dir / "workspace").write_text(str(self.workspace) + "\n", encoding="utf-8")
        self._write_excludes(())

    def _write_excludes(self, large: Sequence[str]) -> None:
        info = self.git_dir / "info"
        info.mkdir(exist_ok=True)
        lines = [*DEFAULT_EXCLUDES, *("/" + _glob_escape(p) for p in large)]
        (info / "exclude").write_text("\n".join(lines) + "\n", encoding="utf-8")

    def _large(self) -> list[str]:
        """Files over the size limit among those the next ``add`` would take: the new ones and
        the changed ones (a file already checked stays known through the exclude list)."""
        listed = self.git("ls-files", "-z", "--others", "--modified", "--exclude-standard")
        found = []
        for rel in filter(None, listed.split("\0")):
            try:
                size = os.lstat(self.workspace / rel).st_size
            except OSError:
                continue
            if size > self.max_file_bytes:
                found.append(rel)
        return found

    # --- checkpoints ------------------------------------------------------------------------
    def snapshot(self, *, session_id: str, turn_id: str, tool: str) -> Checkpoint | None:
        """Commit the workspace as it is now; None when nothing changed since the last
        checkpoint (then nothing is written)."""
        if not self.exists:
            self.init()
        large = self._large()
        if large:
            known = (self.git_dir / "info" / "exclude").read_text(encoding="utf-8").splitlines()
            self._write_excludes([*(k[1:] for k in known if k.startswith("/")), *large])
            self.git("rm", "-q", "-r", "--cached", "--ignore-unmatch", "--", *large)
        self.git("add", "-A", "--", ".")
        tree = self.git("write-tree").strip()
        head = self.git("rev-parse", "-q", "--verify", "HEAD^{commit}", check=False).strip()
        if head and self.git("rev-parse", f"{head}^{{tree}}").strip() == tree:
            return None
        created = time.time()
        message = (f"{_SUBJECT}\n\nsession: {session_id}\nturn: {turn_id}\ntool: {tool}\n"
                   f"created: {created:.3f}\n")
        parent = ("-p", head) if head else ()
        commit = self.git("commit-tree", tree, *parent, input=message.encode()).strip()
        self.git("update-ref", "HEAD", commit)
        files = self.git("ls-files", "-z").count("\0")  # the index holds what was committed
        return Checkpoint(commit, created, session_id, turn_id, tool, files)

    def _read(self, commit: str) -> Checkpoint:
        body = self.git("log", "-1", "--format=%B", commit)
        fields = dict(line.split(": ", 1) for line in body.splitlines() if ": " in line)
        files = len(self.git("ls-tree", "-r", "-z", "--name-only", commit).split("\0")) - 1
        return Checkpoint(commit, float(fields.get("created", "0")), fields.get("session", ""),
                          fields.get("turn", ""), fields.get("tool", ""), files)

    def checkpoints(self) -> list[Checkpoint]:
        """Every checkpoint, the newest first."""
        if not self.exists or not self.git("rev-parse", "-q", "--verify", "HEAD",
                                           check=False).strip():
            return []
        commits = self.git("rev-list", "HEAD").split()
        return [self._read(commit) for commit in commits]

    def diff(self, commit: str, *, stat: bool = True) -> str:
        """What restoring ``commit`` would change in the workspace as it is now."""
        self.git("add", "-A", "--", ".")  # the index now stands for the workspace
        return self.git("diff", "--cached", "-R", "--no-color", "--no-renames",
                        *(("--stat=100",) if stat else ()), commit)

    def restore(self, commit: str) -> list[str]:
        """Put the workspace back as it was at ``commit``: changed and deleted files come back
        byte for byte, files created since are removed. The state before is checkpointed
        first, so a restore can itself be undone. Returns the paths changed."""
        self.snapshot(session_id="", turn_id="", tool="restore")
        changed = self.git("diff", "-z", "--name-only", "--no-renames", commit, "HEAD")
        added = self.git("diff", "-z", "--name-only", "--no-renames", "--diff-filter=A",
                         commit, "HEAD")
        created = [p for p in added.split("\0") if p]
        for rel in created:
            path = self.workspace / rel
            if path.is_symlink() or path.is_file():
                path.unlink()
        back = [p for p in changed.split("\0") if p and p not in set(created)]
        if back:  # only the paths that differ are written: other files keep their mtimes
            self.git("checkout", commit, "--pathspec-from-file=-", "--pathspec-file-nul",
                     input="\0".join(back).encode("utf-8", "surrogateescape"))
        self.git("add", "-A", "--", ".")
        _remove_empty_dirs(self.workspace, created)
        return [p for p in changed.split("\0") if p]

    def prune(self, keep: int) -> int:
        """Keep only the newest ``keep`` checkpoints; returns how many were dropped."""
        commits = self.git("rev-list", "HEAD").split() if self.checkpoints() else []
        if len(commits) <= keep:
            return 0
        parent: str | None = None
        for commit in reversed(commits[:keep]):  # rebuild the kept ones on a shorter chain
            body = self.git("log", "-1", "--format=%B", commit)
            tree = self.git("rev-parse", f"{commit}^{{tree}}").strip()
            args = ("-p", parent) if parent else ()
            parent = self.git("commit-tree", tree, *args, input=body.encode()).strip()
        assert parent is not None
        self.git("update-ref", "HEAD", parent)
        self.git("reflog", "expire", "--expire=now", "--all")
        self.git("gc", "-q", "--prune=now")
        return len(commits) - keep


def _glob_escape(path: str) -> str:
    return "".join("\\" + c if c in "*?[\\!#" else c for c in path)


def _remove_empty_dirs(workspace: Path, removed: Sequence[str]) -> None:
    """Folders left empty by removing files created after the checkpoint."""
    parents = {(workspace / rel).parent for rel in removed}
    for folder in sorted(parents, key=lambda p: len(p.parts), reverse=True):
        while folder != workspace and folder.is_relative_to(workspace):
            try:
                folder.rmdir()
            except OSError:
                break
            folder = folder.parent

"""Checkpoints: real git, real files. The workspace is snapshotted before each turn's first
file-changing tool call and restored byte for byte; the user's own repository is never
touched."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hermes_agent.builtin_plugins.core_tools.checkpoints.shadow import ShadowRepo, repo_dir
from hermes_agent.testing import make_kernel

pytestmark = pytest.mark.skipif(subprocess.run(["git", "--version"], capture_output=True)
                                .returncode != 0, reason="needs git")


def tree_digest(root: Path) -> dict[str, str]:
    """Every path under ``root`` with a digest of its bytes (or its link target / "dir")."""
    found = {}
    for path in sorted(root.rglob("*")):
        key = str(path.relative_to(root))
        if path.is_symlink():
            found[key] = "-> " + os.readlink(path)
        elif path.is_dir():
            found[key] = "dir"
        else:
            found[key] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=u", "-c", "user.email=u@x", *args], cwd=cwd,
                          check=True, capture_output=True, text=True).stdout


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A user's project with its own git history, a binary file, a link and ignored files."""
    work = tmp_path / "home" / "proj"
    (work / "src").mkdir(parents=True)
    (work / "src" / "app.py").write_text("print('app')\n")
    (work / "README.md").write_text("# proj\n")
    (work / "logo.bin").write_bytes(bytes(range(256)) * 4)
    (work / "link").symlink_to("README.md")
    (work / ".gitignore").write_text("build/\n")
    (work / "build").mkdir()
    (work / "build" / "out.o").write_bytes(b"\0" * 100)
    git(work, "init", "-q")
    git(work, "add", ".")
    git(work, "commit", "-qm", "first")
    (work / "notes.txt").write_text("uncommitted work\n")  # the user's own, never committed
    return work


@pytest.fixture
def kernel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # the sandbox's home folder
    kernel = make_kernel(tmp_path / "hermes", builtins=True,
                         env={"HOME": str(tmp_path / "home"), "HERMES_HOME": str(tmp_path / "hermes")})
    yield kernel
    kernel.close()


def call(kernel, work: Path, tool: str, args: dict, turn: str = "t1") -> dict:
    return json.loads(kernel.tools.dispatch(tool, args, cwd=str(work), session_id="s1",
                                            turn_id=turn))


def test_a_broken_turn_is_rolled_back_byte_for_byte_and_the_users_git_is_untouched(
        kernel, project: Path) -> None:
    before = tree_digest(project)
    user_git = tree_digest(project / ".git")
    log, status = git(project, "log", "--format=%H %s"), git(project, "status", "--porcelain")
    call(kernel, project, "write_file", {"path": "src/app.py", "content": "broken\n"})
    call(kernel, project, "patch", {"path": "README.md", "old_string": "# proj",
                                    "new_string": "# gone"})
    call(kernel, project, "terminal", {"command": "head -c 10 /dev/zero > logo.bin && rm "
                                                  "notes.txt && mkdir -p new && echo x > new/y"})
    assert tree_digest(project) != before
    repo = ShadowRepo(kernel.home, project)
    [checkpoint] = repo.checkpoints()  # one per turn: the first change of the turn
    assert checkpoint.tool == "write_file" and checkpoint.session_id == "s1"
    changed = repo.restore(checkpoint.commit)
    assert sorted(changed) == ["README.md", "logo.bin", "new/y", "notes.txt", "src/app.py"]
    assert tree_digest(project) == before  # also: new/ is gone, build/ (ignored) kept
    assert tree_digest(project / ".git") == user_git
    assert git(project, "log", "--format=%H %s") == log
    assert git(project, "status", "--porcelain") == status
    assert not (project / ".git" / "hermes").exists()


def test_nothing_changed_takes_no_new_checkpoint_and_each_turn_takes_one(
        kernel, project: Path) -> None:
    call(kernel, project, "write_file", {"path": "a.txt", "content": "1"}, turn="t1")
    call(kernel, project, "write_file", {"path": "a.txt", "content": "2"}, turn="t1")
    call(kernel, project, "terminal", {"command": "true"}, turn="t2")
    repo = ShadowRepo(kernel.home, project)
    assert [c.turn_id for c in repo.checkpoints()] == ["t2", "t1"]  # t2 saw a.txt changed
    call(kernel, project, "terminal", {"command": "true"}, turn="t3")  # nothing changed since
    assert len(repo.checkpoints()) == 2


def test_large_and_ignored_files_are_left_out(tmp_path: Path, project: Path) -> None:
    (project / "big.dat").write_bytes(b"x" * 2_000_001)
    (project / "node_modules" / "pkg").mkdir(parents=True)
    (project / "node_modules" / "pkg" / "index.js").write_text("x")
    repo = ShadowRepo(tmp_path / "h", project, max_file_bytes=2_000_000)
    checkpoint = repo.snapshot(session_id="s", turn_id="t", tool="write_file")
    assert checkpoint is not None
    held = set(repo.git("ls-tree", "-r", "--name-only", checkpoint.commit).split())
    assert {"README.md", "src/app.py", "notes.txt", "link", "logo.bin", ".gitignore"} <= held
    assert not held & {"big.dat", "build/out.o", "node_modules/pkg/index.js"}
    assert not any(name.startswith(".git/") for name in held)
    (project / "big.dat").write_bytes(b"y")  # once left out, it stays out
    assert repo.restore(checkpoint.commit) == []
    assert (project / "big.dat").read_bytes() == b"y"  # never restored over, never deleted


def test_the_shadow_repository_is_under_the_hermes_home_and_hidden_from_commands(
        kernel, project: Path) -> None:
    call(kernel, project, "write_file", {"path": "a.txt", "content": "1"})
    where = repo_dir(Path(kernel.home), project)
    assert (where / "HEAD").is_file() and Path(kernel.home) in where.parents
    seen = call(kernel, project, "terminal", {"command": f"ls {where} 2>&1; echo rc=$?"})
    assert "HEAD" not in seen["output"]


def test_the_home_folder_is_no_workspace_so_it_gets_no_checkpoint(kernel, tmp_path) -> None:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    call(kernel, home, "terminal", {"command": "true"})
    assert not (Path(kernel.home) / "checkpoints").exists() or not any(
        (Path(kernel.home) / "checkpoints").glob("*/HEAD"))


def test_a_workspace_over_max_files_is_not_checkpointed(tmp_path: Path) -> None:
    work = tmp_path / "home" / "many"
    work.mkdir(parents=True)
    for i in range(30):
        (work / f"f{i}").write_text(str(i))
    kernel = make_kernel(tmp_path / "hermes", builtins=True,
                         config={"checkpoints": {"max_files": 20}},
                         env={"HOME": str(tmp_path / "home")})
    try:
        assert call(kernel, work, "write_file", {"path": "x", "content": "x"}).get("error") is None
        assert not ShadowRepo(Path(kernel.home), work).exists
    finally:
        kernel.close()


def test_checkpoints_enabled_false_takes_none(tmp_path: Path, project: Path) -> None:
    kernel = make_kernel(tmp_path / "hermes2", builtins=True,
                         config={"checkpoints": {"enabled": False}},
                         env={"HOME": str(tmp_path / "home")})
    try:
        call(kernel, project, "write_file", {"path": "a.txt", "content": "1"})
        assert not ShadowRepo(Path(kernel.home), project).exists
    finally:
        kernel.close()


def test_prune_keeps_the_newest_and_their_contents(tmp_path: Path, project: Path) -> None:
    repo = ShadowRepo(tmp_path / "h", project)
    for i in range(5):
        (project / "n.txt").write_text(str(i))
        repo.snapshot(session_id="s", turn_id=f"t{i}", tool="write_file")
    assert repo.prune(2) == 3
    kept = repo.checkpoints()
    assert [c.turn_id for c in kept] == ["t4", "t3"]
    repo.restore(kept[1].commit)
    assert (project / "n.txt").read_text() == "3"


def test_the_cli_lists_diffs_restores_and_prunes(kernel, project: Path, tmp_path: Path) -> None:
    call(kernel, project, "write_file", {"path": "src/app.py", "content": "broken\n"})
    env = {k: v for k, v in os.environ.items() if not k.startswith("HERMES_")}
    env.update(HOME=str(tmp_path / "home"), HERMES_HOME=str(kernel.home))
    hermes = str(Path(sys.executable).parent / "hermes")

    def run(*args: str, answer: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run([hermes, "checkpoints", *args], cwd=project, env=env, text=True,
                              capture_output=True, input=answer, timeout=120)

    listed = run("list")
    assert listed.returncode == 0 and "write_file" in listed.stdout and "s1" in listed.stdout
    diff = run("diff", "1", "--full")
    assert "-broken" in diff.stdout and "+print('app')" in diff.stdout
    refused = run("restore", "1", answer="n\n")
    assert (project / "src" / "app.py").read_text() == "broken\n", refused.stdout
    nobody = run("restore", "1", answer="")
    assert nobody.returncode == 1 and "--yes" in nobody.stderr
    done = run("restore", "1", "--yes")
    assert done.returncode == 0 and "Restored 1 file" in done.stdout, done.stderr
    assert (project / "src" / "app.py").read_text() == "print('app')\n"
    undo = run("restore", "1", "--yes")  # the restore is itself undoable
    assert (project / "src" / "app.py").read_text() == "broken\n", undo.stdout
    missing = run("diff", "9")
    assert missing.returncode == 1 and "there is no checkpoint 9" in missing.stderr
    # the turn's checkpoint and one before each of the two restores
    assert "Dropped 2 checkpoints" in run("prune", "--keep", "1").stdout
    assert "proj" in run("list", "--all").stdout
    outside = subprocess.run([hermes, "checkpoints", "list"], cwd=tmp_path / "home", env=env,
                             text=True, capture_output=True, timeout=120)
    assert outside.returncode == 1 and "not a workspace" in outside.stderr


def test_rollback_slash_command_lists_and_restores(kernel, project: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    command = kernel.registered("slash_command")["rollback"]
    monkeypatch.chdir(project)
    assert "No checkpoints" in command.handler("")
    call(kernel, project, "write_file", {"path": "README.md", "content": "gone\n"})
    assert "write_file" in command.handler("")
    monkeypatch.setattr("builtins.input", lambda prompt: "n")
    assert command.handler("1") == "Nothing was restored."
    assert (project / "README.md").read_text() == "gone\n"
    monkeypatch.setattr("builtins.input", lambda prompt: "y")
    assert "Restored 1 file" in command.handler("1")
    assert (project / "README.md").read_text() == "# proj\n"
    assert "there is no checkpoint 7" in command.handler("7 yes")

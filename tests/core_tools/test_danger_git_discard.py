"""Git commands that discard work are asked about (``git_destroy``), their neighbours are not.

Inside the workspace the sandbox lets git do anything, so the analyser's question is what
stands between the model and lost work. Each shape is first run for real in a throwaway
repository holding every kind of work git can lose (an edit, an untracked file, a stash, an
unmerged branch, a commit only the reflog still reaches), to show it really loses it; each
neighbour is run too, to show it loses nothing and stays unasked.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from hermes_agent.builtin_plugins.core_tools.danger import analyse, dangerous, hardline

EDIT = "WORK-IN-PROGRESS-3f9a"


@dataclass
class Repo:
    path: Path
    env: dict[str, str]
    lost: str  # a commit only the reflog reaches

    def bash(self, command: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["bash", "-c", command], cwd=cwd or self.path, env=self.env,
                              text=True, capture_output=True, timeout=30,
                              stdin=subprocess.DEVNULL)

    def git(self, *args: str) -> str:
        return subprocess.run(["git", *args], cwd=self.path, env=self.env, text=True,
                              capture_output=True, timeout=30).stdout

    def kept(self) -> dict[str, bool]:
        """Which kinds of work are still there."""
        return {
            "edit": (self.path / "tracked.txt").is_file()
            and EDIT in (self.path / "tracked.txt").read_text(),
            "untracked": (self.path / "scratch.txt").is_file(),
            "stash": "stash@{0}" in self.git("stash", "list"),
            "branch": "topic" in self.git("branch", "--list", "topic"),
            "reflog": self.lost in self.git("rev-list", "--all", "--reflog").split(),
            "object": subprocess.run(["git", "cat-file", "-e", self.lost], cwd=self.path,
                                     env=self.env).returncode == 0,
            "worktree": (self.path.parent / "wt" / "wip.txt").is_file(),
        }


def _env(home: Path) -> dict[str, str]:
    return {"HOME": str(home), "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@b",
            "GIT_COMMITTER_NAME": "a", "GIT_COMMITTER_EMAIL": "a@b"}


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A repository holding every kind of work (made once, copied for each test)."""
    root = tmp_path_factory.mktemp("git-discard")
    path = root / "project"
    path.mkdir()
    setup = (
        "git init -q -b main . && echo committed > tracked.txt && echo base > other.txt"
        " && git add . && git commit -qm base"
        " && git switch -qc topic && echo t > topic.txt && git add topic.txt"
        " && git commit -qm topic && git switch -q main"
        " && echo lost > lost.txt && git add lost.txt && git commit -qm lost"
        " && git rev-parse HEAD > ../lost && git reset -q --hard HEAD~1"
        " && echo stashed > other.txt && git stash -q"
        f" && echo {EDIT} > tracked.txt && echo scratch > scratch.txt")
    done = subprocess.run(["bash", "-c", setup], cwd=path, env=_env(root), text=True,
                          capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return path, (root / "lost").read_text().strip()


#: a worktree with an untracked file in it (for ``worktree remove``)
WORKTREE = "git worktree add -q --detach ../wt && echo wip > ../wt/wip.txt"


@pytest.fixture
def repo(template: tuple[Path, str], tmp_path: Path) -> Repo:
    path = tmp_path / "project"
    shutil.copytree(template[0], path, symlinks=True)
    box = Repo(path, _env(tmp_path), template[1])
    kept = box.kept()
    assert all(v for kind, v in kept.items() if kind != "worktree"), kept
    return box


#: command -> (the work it loses, set-up run first and not judged)
DISCARDS: dict[str, tuple[str, str]] = {
    "git reset --hard": ("edit", ""), "git reset --hard HEAD": ("edit", ""),
    "git reset --har": ("edit", ""), "git reset -q --hard main": ("edit", ""),
    "git checkout -- .": ("edit", ""), "git checkout -- tracked.txt": ("edit", ""),
    "git checkout .": ("edit", ""), "git checkout HEAD -- .": ("edit", ""),
    "git checkout main tracked.txt": ("edit", ""), "git checkout './tracked.txt'": ("edit", ""),
    "git checkout '*.txt'": ("edit", ""), "git checkout -f topic": ("edit", ""),
    "git checkout --forc topic": ("edit", ""), "git switch -f topic": ("edit", ""),
    "git switch --discard-changes topic": ("edit", ""), "git restore .": ("edit", ""),
    "git restore tracked.txt": ("edit", ""), "git restore --worktree tracked.txt": ("edit", ""),
    "git restore -W tracked.txt": ("edit", ""), "git restore -SW tracked.txt": ("edit", ""),
    "git restore --staged --worktree .": ("edit", ""),
    "git restore --source=HEAD tracked.txt": ("edit", ""),
    "git restore -s main tracked.txt": ("edit", ""), "git rm -f tracked.txt": ("edit", ""),
    "git rm -rf .": ("edit", ""), "git clean -f": ("untracked", ""),
    "git clean -fd": ("untracked", ""), "git clean -fdx": ("untracked", ""),
    "git clean --force": ("untracked", ""),
    "git -c clean.requireForce=false clean": ("untracked", ""),
    "git stash clear": ("stash", ""), "git stash drop": ("stash", ""),
    "git stash drop stash@{0}": ("stash", ""), "git branch -D topic": ("branch", ""),
    "git branch --delete --force topic": ("branch", ""),
    "git update-ref -d refs/heads/topic": ("branch", ""),
    "git reflog expire --expire=now --all": ("reflog", ""),
    "git reflog expire --expire-unreachable=now --all": ("reflog", ""),
    "git reflog expire --expire=now --all && git gc --prune=now": ("object", ""),
    "git gc --prune=now": ("object", "git reflog expire --expire=now --all"),
    "git gc --prune=all": ("object", "git reflog expire --expire=now --all"),
    "git -c gc.pruneExpire=now gc": ("object", "git reflog expire --expire=now --all"),
    "git prune": ("object", "git reflog expire --expire=now --all"),
    "git read-tree -u --reset HEAD": ("edit", ""), "git checkout-index -f -a": ("edit", ""),
    "git checkout-index --force tracked.txt": ("edit", ""),
    "git worktree remove --force ../wt": ("worktree", WORKTREE),
    "git worktree remove -f ../wt": ("worktree", WORKTREE),
    # through wrappers, options, quoting, code strings and aliases
    "git -C project reset --hard": ("edit", ""),  # run from the folder above
    "git --git-dir=.git --work-tree=. checkout -- .": ("edit", ""),
    "git -c core.quotepath=off reset --hard": ("edit", ""),
    "env git reset --hard": ("edit", ""), "command git checkout -- .": ("edit", ""),
    "env GIT_PAGER=cat git stash clear": ("stash", ""),
    "\"git\" 'reset' \"--hard\"": ("edit", ""), "g\\it re''set --ha\"rd\"": ("edit", ""),
    "bash -c 'git checkout -- .'": ("edit", ""), "sh -c \"git stash clear\"": ("stash", ""),
    "eval 'git clean -fdx'": ("untracked", ""), "X=--hard; git reset $X": ("edit", ""),
    "timeout 10 nice git restore .": ("edit", ""),
    "git -c alias.nuke='reset --hard' nuke": ("edit", ""),
    "git -c alias.wipe='stash clear' wipe": ("stash", ""),
    "git -c alias.a='checkout --' -c alias.b=a b .": ("edit", ""),
    "git config alias.undo 'reset --hard'; git undo": ("edit", ""),
}


@pytest.mark.parametrize("command", sorted(DISCARDS))
def test_each_discarding_shape_loses_work_and_is_asked(repo: Repo, command: str) -> None:
    loses, setup = DISCARDS[command]
    cwd = repo.path.parent if command.startswith("git -C project") else repo.path
    if setup:
        assert repo.bash(setup).returncode == 0
        assert repo.kept()[loses], f"the set-up already lost the {loses}"
    repo.bash(command, cwd=cwd)
    assert not repo.kept()[loses], f"{command!r} did not lose the {loses}: the test is wrong"
    keys = analyse(command, str(cwd))
    assert "git_destroy" in keys, keys
    finding = dangerous(command, str(cwd))
    assert finding is not None and "git_destroy" in finding.keys
    assert "discarding git history or work" in finding.descriptions
    assert hardline(command, str(cwd)) is None  # asked, never refused


#: shapes that cannot be run in the throwaway repository (a shell alias is not expanded by a
#: non-interactive bash; pushes need a remote): judged only
JUDGED_ONLY = (
    "alias g=git; g reset --hard", "alias gco='git checkout'; gco -- .",
    "sudo git reset --hard origin/main", "git checkout --ours tracked.txt",
    "git checkout --theirs -- tracked.txt", "git checkout ':/'",
    "git checkout --pathspec-from-file=list.txt", "git restore --pathspec-from-file=list.txt",
    "git push --force", "git push -f origin main", "git push --forc origin main",
    "git push origin +main", "git filter-branch --force HEAD", "git filter-repo --path src",
    "git reflog delete HEAD@{1}", "git config --global alias.undo 'reset --hard HEAD~1'",
    "git config set alias.wipe 'stash clear'", "xargs git branch -D < merged.txt",
    "find . -name .git -execdir git clean -fdx \\;", "ssh host 'cd app && git reset --hard'",
    "cd repo && git reset --hard", "GIT_DIR=x git update-ref -d refs/heads/main",
)


@pytest.mark.parametrize("command", JUDGED_ONLY)
def test_shapes_judged_without_running_are_asked(command: str) -> None:
    assert "git_destroy" in analyse(command, "/work/project")
    assert hardline(command, "/work/project") is None


#: neighbours that keep every kind of work (run for real, then judged)
KEEPS = (
    "git status", "git checkout topic", "git checkout main", "git checkout -b new-branch",
    "git checkout -q -b fix/x main", "git checkout -bfix-f", "git checkout -", "git switch topic",
    "git switch -c other", "git restore --staged tracked.txt", "git restore -S tracked.txt",
    "git stash list", "git stash show", "git clean -n", "git clean -fdn",
    "git clean --dry-run -d", "git reflog", "git reflog show main",
    "git reflog expire --all", "git reflog expire --expire=never --all", "git gc",
    "git gc --prune=2.weeks.ago", "git gc --prune=never", "git prune -n", "git prune --dry-run",
    "git worktree prune", "git worktree list", "git worktree remove ../wt",
    "git branch -d topic", "git branch -a", "git branch -M main", "git update-ref refs/x HEAD",
    "git reset --soft HEAD", "git reset tracked.txt", "git reset -q", "git rm --cached -q tracked.txt",
    "git rm -r --cached -q .", "git read-tree -m -u HEAD", "git checkout-index -a",
    "git log --oneline -- .", "git diff -- .", "git add .",
    "git config alias.co checkout", "git config alias.st 'status -sb'",
    "git -c alias.st=status st", "git -C . status", "env git status", "command git diff",
    "bash -c 'git log -1'", "git remote prune origin 2>/dev/null || true",
)


def test_neighbours_keep_the_work_and_stay_unasked(repo: Repo) -> None:
    assert repo.bash(WORKTREE).returncode == 0
    for command in KEEPS:
        repo.bash(command)
        kept = repo.kept()
        assert all(kept.values()), f"{command!r} lost work: {kept}"
        assert analyse(command, str(repo.path)) == (), command
        repo.bash("git switch -q main 2>/dev/null; git reset -q; true")


def test_the_stash_pop_and_fetch_prune_neighbours_are_unasked() -> None:
    # they change the work on purpose or need a remote; judged only
    for command in ("git stash pop", "git stash apply", "git stash", "git fetch --prune",
                    "git push origin main", "git push -u origin feature", "git pull --rebase",
                    "git merge --no-ff topic", "git rebase main", "git commit -am x"):
        assert analyse(command, "/work/project") == (), command

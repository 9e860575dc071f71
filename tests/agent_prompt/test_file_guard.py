"""Prompt files as an attacker would plant them: symlinks out of the project or HERMES_HOME,
symlinked parent directories, FIFOs, devices and huge files. Real files, real links."""

from __future__ import annotations

import datetime as dt
import os
import stat
import subprocess
from pathlib import Path

import pytest

from hermes_agent.builtin_plugins.agent import context_files
from hermes_agent.builtin_plugins.agent.file_guard import RefusedFile, read_inside, read_limit
from hermes_agent.builtin_plugins.agent.prompt import build_system_prompt
from hermes_agent.builtin_plugins.agent.soul import DEFAULT_IDENTITY, load_identity
from hermes_agent.testing import make_kernel

KEY = "sk-live-THIS-MUST-NEVER-REACH-THE-MODEL"
DAY = dt.date(2026, 3, 5)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "hermes-home"
    path.mkdir()
    (path / ".env").write_text(f"OPENAI_API_KEY={KEY}\n")
    return path


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "cloned-repo"
    path.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=path, check=True)
    return path


def test_agents_md_linked_to_the_env_file_never_reaches_the_prompt(home: Path, repo: Path) -> None:
    (repo / "AGENTS.md").symlink_to(home / ".env")
    prompt = build_system_prompt(make_kernel(home), cwd=repo, now=DAY)
    assert KEY not in prompt.text and "AGENTS.md" not in prompt.text
    [notice] = prompt.notices
    assert "not loaded" in notice and "outside the project" in notice
    assert str(repo.resolve()) in notice and "replace the link with a copy" in notice


@pytest.mark.parametrize("name", [".hermes.md", "CLAUDE.md", ".cursorrules"])
def test_every_context_file_kind_refuses_a_link_out(home: Path, repo: Path, name: str) -> None:
    (repo / name).symlink_to(home / ".env")
    loaded = context_files.load(repo)
    assert loaded.files == [] and "outside the project" in loaded.notices[0]


def test_a_symlinked_parent_directory_is_followed_only_inside(home: Path, repo: Path) -> None:
    (home / "rules").mkdir()
    (home / "rules" / "leak.mdc").write_text(f"token {KEY}")
    (repo / ".cursor").mkdir()
    (repo / ".cursor" / "rules").symlink_to(home / "rules")
    loaded = context_files.load(repo)
    assert loaded.files == [] and "leak.mdc: not loaded" in loaded.notices[0]
    assert KEY not in loaded.render()


def test_dot_dot_and_links_that_stay_inside_work(repo: Path) -> None:
    (repo / "docs").mkdir()
    (repo / "docs" / "agents.txt").write_text("Run make test.")
    (repo / "AGENTS.md").symlink_to(Path("docs") / ".." / "docs" / "agents.txt")
    loaded = context_files.load(repo)
    assert [f.text for f in loaded.files] == ["Run make test."] and loaded.notices == []


def test_hermes_md_from_a_parent_counts_the_git_root_as_the_project(tmp_path: Path,
                                                                   repo: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("private notes")
    work = repo / "pkg"
    work.mkdir()
    (repo / ".hermes.md").symlink_to(outside)
    assert "outside the project" in context_files.load(work).notices[0]
    (repo / ".hermes.md").unlink()
    (repo / "rules.md").write_text("Use tabs.")
    (repo / ".hermes.md").symlink_to(repo / "rules.md")
    assert [f.text for f in context_files.load(work).files] == ["Use tabs."]


def test_without_git_the_working_directory_is_the_project(tmp_path: Path) -> None:
    (tmp_path / "parent.md").write_text("one level up")
    work = tmp_path / "work"
    work.mkdir()
    (work / "AGENTS.md").symlink_to(Path("..") / "parent.md")
    assert "outside the project" in context_files.load(work).notices[0]


def test_a_fifo_is_refused_without_hanging(repo: Path) -> None:
    os.mkfifo(repo / "AGENTS.md")  # no writer: a blocking open would never return
    loaded = context_files.load(repo)
    assert loaded.files == []
    assert "named pipe" in loaded.notices[0] and "only regular files" in loaded.notices[0]


def test_a_device_behind_a_link_is_refused(repo: Path) -> None:
    (repo / "AGENTS.md").symlink_to("/dev/zero")
    assert "outside the project" in context_files.load(repo).notices[0]
    with pytest.raises(RefusedFile, match="character device"):
        read_inside(Path("/dev/zero"), Path("/dev"), 100, root_label="the project")


def test_a_huge_file_is_read_only_at_its_ends(repo: Path) -> None:
    big = repo / "AGENTS.md"
    with big.open("wb") as handle:  # sparse: 2 GiB on paper, the middle is never read
        handle.write(b"HEAD rules\n")
        handle.truncate(2 << 30)
        handle.seek((2 << 30) - 20)
        handle.write(b"\nTAIL rules the end\n")
    read = read_inside(big, repo, 1000, root_label="the project")
    assert not read.complete and read.size == 2 << 30
    assert len(read.text) <= 2 * read_limit(1000)
    loaded = context_files.load(repo, max_chars=1000)
    [file] = loaded.files
    assert file.truncated and file.text.startswith("HEAD rules") and file.text.endswith("the end")
    assert "2,147,483,648 bytes in all" in file.text and len(file.text) < 1300


def test_a_file_just_over_the_read_limit_keeps_an_exact_count(repo: Path) -> None:
    text = "é" * (read_limit(100) // 2 + 10)  # two bytes each: a little over the limit
    (repo / "AGENTS.md").write_text(text)
    read = read_inside(repo / "AGENTS.md", repo, 100, root_label="the project")
    assert read.complete and read.text == text


def test_soul_md_linked_out_of_hermes_home_is_not_used(tmp_path: Path, home: Path) -> None:
    secret = tmp_path / "elsewhere.txt"
    secret.write_text(f"You are Ada. {KEY}")
    (home / "SOUL.md").symlink_to(secret)
    identity = load_identity(home)
    assert identity.text == DEFAULT_IDENTITY and identity.source == "builtin"
    assert "outside HERMES_HOME" in identity.notices[0]
    assert secret.read_text() == f"You are Ada. {KEY}"  # not overwritten through the link


def test_a_dangling_soul_link_is_neither_followed_nor_replaced(tmp_path: Path) -> None:
    home = tmp_path / "h"
    home.mkdir()
    (home / "SOUL.md").symlink_to(tmp_path / "planted.md")
    assert load_identity(home).text == DEFAULT_IDENTITY
    assert not (tmp_path / "planted.md").exists() and (home / "SOUL.md").is_symlink()


def test_soul_md_is_created_private(tmp_path: Path) -> None:
    home = tmp_path / "fresh"
    load_identity(home)
    assert stat.S_IMODE((home / "SOUL.md").stat().st_mode) == 0o600


def test_soul_inside_a_symlinked_home_still_loads(tmp_path: Path) -> None:
    real = tmp_path / "real-home"
    real.mkdir()
    (real / "SOUL.md").write_text("You are Ada.")
    (tmp_path / "home-link").symlink_to(real)
    assert load_identity(tmp_path / "home-link").text == "You are Ada."


def test_a_project_that_contains_hermes_home_still_cannot_link_into_it(tmp_path: Path) -> None:
    """hermes run in the home directory: ~/.hermes is inside the project."""
    home = tmp_path / ".hermes"
    home.mkdir()
    (home / ".env").write_text(f"KEY={KEY}\n")
    (tmp_path / "AGENTS.md").symlink_to(home / ".env")
    prompt = build_system_prompt(make_kernel(home), cwd=tmp_path, now=DAY)
    assert KEY not in prompt.text and "inside HERMES_HOME" in prompt.notices[0]
    (tmp_path / "AGENTS.md").unlink()
    (home / "project-notes.md").write_text("Use tabs.")
    (home / "AGENTS.md").symlink_to(home / "project-notes.md")  # working inside HERMES_HOME
    assert "Use tabs." in build_system_prompt(make_kernel(home), cwd=home, now=DAY).text

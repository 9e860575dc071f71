"""search_files over real trees; .gitignore decisions are checked against git itself."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from hermes_agent.builtin_plugins.core_tools.gitignore import parse_line
from hermes_agent.builtin_plugins.core_tools.search import walk

from .conftest import Call


def tree(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


GITIGNORE_TREE = {
    ".gitignore": "*.log\n!keep.log\nbuild/\n/top_only.txt\ndocs/**/secret*\n**/cache\n"
                  "\\#literal\n*.tmp\n!src/important.tmp\n",
    "src/main.py": "print('TODO main')\n",
    "src/app.log": "TODO log\n",
    "src/keep.log": "TODO keep\n",
    "src/important.tmp": "TODO tmp kept\n",
    "src/other.tmp": "TODO tmp\n",
    "src/top_only.txt": "nested copy is not ignored\n",
    "top_only.txt": "ignored at the top\n",
    "build/out.js": "TODO built\n",
    "lib/build/x.js": "dir rule matches at any depth\n",
    "docs/a/b/secret.md": "TODO hidden\n",
    "docs/a/public.md": "TODO public\n",
    "pkg/cache/blob.txt": "TODO cache\n",
    "#literal": "hash name\n",
    "pkg/.gitignore": "*.gen.py\n!keep.gen.py\n",
    "pkg/a.gen.py": "TODO generated\n",
    "pkg/keep.gen.py": "TODO generated but kept\n",
    "pkg/real.py": "TODO real\n",
    "notes[1].txt": "brackets\n",
}


def git_visible(root: Path) -> set[str]:
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"],
                         cwd=root, check=True, capture_output=True, text=True).stdout
    return set(out.splitlines())


def test_walk_agrees_with_git_on_what_is_ignored(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    tree(root, GITIGNORE_TREE)
    expected = git_visible(root)
    assert "src/app.log" not in expected and "src/keep.log" in expected  # sanity: git is real
    assert {rel for _, rel in walk(root)} == expected


def test_walk_from_a_subdirectory_honours_the_repository_rules(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    tree(root, GITIGNORE_TREE)
    expected = {p.removeprefix("pkg/") for p in git_visible(root) if p.startswith("pkg/")}
    assert {rel for _, rel in walk(root / "pkg")} == expected
    assert "cache/blob.txt" not in expected


@pytest.mark.parametrize("line", ["# comment", "", "   ", "!", "/"])
def test_lines_that_are_not_rules(line: str) -> None:
    assert parse_line(line, "") is None


def test_content_search_skips_ignored_files_and_git_folder(call: Call, work: Path) -> None:
    tree(work, GITIGNORE_TREE)
    tree(work, {".git/config": "TODO in git\n"})
    result = call("search_files", {"pattern": r"TODO \w+"})
    paths = [m["path"] for m in result["matches"]]
    assert paths == sorted(paths)
    assert set(paths) == {"src/main.py", "src/keep.log", "src/important.tmp", "docs/a/public.md",
                          "pkg/keep.gen.py", "pkg/real.py"}
    first = result["matches"][0]
    assert first == {"path": "docs/a/public.md", "line": 1, "text": "TODO public"}


def test_files_target_glob_modes_and_paging(call: Call, work: Path) -> None:
    tree(work, {f"m{i}.py": "hit\nhit\n" if i % 2 else "miss\n" for i in range(6)})
    tree(work, {"sub/x.py": "hit\n", "sub/y.txt": "hit\n"})
    files = call("search_files", {"pattern": "*.py", "target": "files"})
    assert files["files"] == ["m0.py", "m1.py", "m2.py", "m3.py", "m4.py", "m5.py", "sub/x.py"]
    only = call("search_files", {"pattern": "hit", "output_mode": "files_only",
                                 "file_glob": "*.py"})
    assert only["files"] == ["m1.py", "m3.py", "m5.py", "sub/x.py"]
    counts = call("search_files", {"pattern": "hit", "output_mode": "count"})
    assert counts["total_matches"] == 8 and counts["counts"][0] == {"path": "m1.py", "count": 2}
    page = call("search_files", {"pattern": "hit", "limit": 3})
    assert page["total"] == 8 and len(page["matches"]) == 3 and page["next_offset"] == 3
    last = call("search_files", {"pattern": "hit", "limit": 3, "offset": 6})
    assert len(last["matches"]) == 2 and "next_offset" not in last


def test_context_lines_and_bad_regex(call: Call, work: Path) -> None:
    tree(work, {"f.txt": "a\nb\nNEEDLE\nc\nd\n"})
    match = call("search_files", {"pattern": "NEEDLE", "context": 1})["matches"][0]
    assert (match["before"], match["after"]) == (["b"], ["c"])
    error = call("search_files", {"pattern": "foo("})["error"]
    assert "Invalid regular expression" in error and "backslash" in error
    assert "Path not found" in call("search_files", {"pattern": "x", "path": "nope"})["error"]

"""read_file, write_file and patch on real files."""

from __future__ import annotations

import os
from pathlib import Path

from .conftest import Call


def test_read_file_numbers_lines_and_pages(call: Call, work: Path) -> None:
    (work / "a.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    first = call("read_file", {"path": "a.txt", "limit": 3})
    assert first["content"] == "1|line 1\n2|line 2\n3|line 3"
    assert (first["total_lines"], first["next_offset"]) == (10, 4)
    rest = call("read_file", {"path": str(work / "a.txt"), "offset": first["next_offset"],
                              "limit": 100})
    assert rest["content"].splitlines()[0] == "4|line 4" and rest["end_line"] == 10
    assert rest["next_offset"] is None
    assert "past the end" in call("read_file", {"path": "a.txt", "offset": 50})["error"]


def test_read_file_errors_point_to_a_fix(call: Call, work: Path) -> None:
    (work / "config.yaml").write_text("x: 1\n")
    (work / "blob.bin").write_bytes(b"\x00\x01\x02")
    missing = call("read_file", {"path": "config.yml"})["error"]
    assert "File not found" in missing and "config.yaml" in missing and "search_files" in missing
    assert "binary" in call("read_file", {"path": "blob.bin"})["error"]
    assert "directory" in call("read_file", {"path": "."})["error"]
    assert "needs a 'path'" in call("read_file", {})["error"]


def test_read_file_shortens_very_long_lines(call: Call, work: Path) -> None:
    (work / "wide.txt").write_text("x" * 5000 + "\nshort\n")
    result = call("read_file", {"path": "wide.txt"})
    first = result["content"].splitlines()[0]
    assert first.endswith("[line truncated]") and len(first) < 2100
    assert "shortened" in result["note"]


def test_write_file_creates_parents_and_keeps_mode(call: Call, work: Path) -> None:
    result = call("write_file", {"path": "deep/dir/new.txt", "content": "héllo\nworld"})
    assert result["created"] is True and result["bytes_written"] == len("héllo\nworld".encode())
    assert (work / "deep/dir/new.txt").read_text() == "héllo\nworld"
    script = work / "run.sh"
    script.write_text("old")
    os.chmod(script, 0o755)
    again = call("write_file", {"path": "run.sh", "content": "#!/bin/sh\n"})
    assert again["created"] is False and script.read_text() == "#!/bin/sh\n"
    assert script.stat().st_mode & 0o777 == 0o755
    assert not [p for p in work.iterdir() if p.name.endswith(".tmp")]


def test_patch_replaces_one_unique_occurrence(call: Call, work: Path) -> None:
    target = work / "m.py"
    target.write_text("def f():\n    return 1\n\ndef g():\n    return 2\n")
    result = call("patch", {"path": "m.py", "old_string": "return 2", "new_string": "return 3"})
    assert result["replacements"] == 1 and "-    return 2" in result["diff"]
    assert target.read_text().endswith("return 3\n") and "return 1" in target.read_text()


def test_patch_refuses_ambiguous_or_missing_text(call: Call, work: Path) -> None:
    target = work / "m.py"
    original = "a = 1\nb = 1\nc = 1\n"
    target.write_text(original)
    many = call("patch", {"path": "m.py", "old_string": " = 1", "new_string": " = 2"})["error"]
    assert "occurs 3 times" in many and "lines 1, 2, 3" in many and "replace_all" in many
    assert target.read_text() == original
    both = call("patch", {"path": "m.py", "old_string": " = 1", "new_string": " = 2",
                          "replace_all": True})
    assert both["replacements"] == 3 and target.read_text() == "a = 2\nb = 2\nc = 2\n"
    absent = call("patch", {"path": "m.py", "old_string": "zzz", "new_string": "y"})["error"]
    assert "not found" in absent
    same = call("patch", {"path": "m.py", "old_string": "a", "new_string": "a"})["error"]
    assert "identical" in same


def test_patch_hints_at_whitespace_mismatch(call: Call, work: Path) -> None:
    (work / "i.py").write_text("if x:\n        do_it()\n")
    error = call("patch", {"path": "i.py", "old_string": "if x:\n    do_it()",
                           "new_string": "pass"})["error"]
    assert "apart from whitespace" in error and "line 1" in error

"""``/rollback`` in a real ``hermes chat``: a scripted turn breaks three files and deletes one
through the real tools; ``/rollback 1`` shows the change, asks, and restores all four byte for
byte, leaving the user's own git history as it was."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from hermes_agent.testing.fake_llm import reply_text, reply_tool_call, reply_tool_calls

from .test_chat_pty import start_chat


def digests(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.skipif(sys.platform == "win32" or not shutil.which("git"),
                    reason="needs a POSIX pseudo-terminal and git")
def test_rollback_restores_a_broken_turn_in_the_chat(home: Path, server, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    for name, text in (("a.py", "a = 1\n"), ("b.py", "b = 2\n"), ("c.txt", "see\n"),
                       ("d.cfg", "keep=me\n")):
        (work / name).write_text(text)
    (work / "blob.bin").write_bytes(os.urandom(4096))
    git = ["git", "-c", "user.name=u", "-c", "user.email=u@x"]
    subprocess.run([*git, "init", "-q"], cwd=work, check=True)
    subprocess.run([*git, "add", "."], cwd=work, check=True)
    subprocess.run([*git, "commit", "-qm", "mine"], cwd=work, check=True)
    before, git_before = digests(work), digests(work / ".git")
    (home / "config.yaml").write_text(yaml.safe_dump({
        "model": {"provider": "custom", "base_url": server.openai_base_url,
                  "default": "fake-model", "max_retries": 0},
        "approvals": {"mode": "off"},  # the turn's commands run without asking
        "sessions": {"auto_title": False}}))
    server.script(
        reply_tool_calls(("write_file", {"path": "a.py", "content": "oops\n"}),
                         ("patch", {"path": "b.py", "old_string": "b = 2", "new_string": "b ="})),
        reply_tool_call("terminal", {"command": "printf broken > c.txt && rm d.cfg && "
                                                "head -c 7 /dev/zero > blob.bin"}),
        reply_text("I refactored everything."))
    term = start_chat(home, cwd=work)
    term.read_until("› ")
    term.type("refactor the project\r")
    assert "I refactored everything." in term.read_until("› ", timeout=60)
    assert not (work / "d.cfg").exists() and (work / "a.py").read_text() == "oops\n"

    term.type("/rollback\r")
    listing = term.read_until("› ")
    assert "write_file" in listing and "/rollback N" in listing
    term.type("/rollback 1\r")
    shown = term.read_until("Restore these files? [y/N] ")
    for name in ("a.py", "b.py", "c.txt", "d.cfg", "blob.bin"):
        assert name in shown
    term.type("y\r")
    assert "Restored 5 files" in term.read_until("› ")
    assert digests(work) == before
    assert digests(work / ".git") == git_before
    term.type("/quit\r")
    assert term.wait() == 0

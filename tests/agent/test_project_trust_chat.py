"""The chat's question about an untrusted project folder, in a real pseudo-terminal: yes saves
the trust (the context file is an instruction from then on), no goes on untrusted and is not
asked again; `hermes chat -q` never asks and stays untrusted."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from hermes_agent.kits.fence import sources
from hermes_agent.testing.fake_llm import reply_text

from .pty_terminal import Terminal

QUESTION = "Trust this folder (saved in config.yaml)?"
SOURCE = "file:AGENTS.md (untrusted project)"
pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")


def hermes() -> str:
    path = shutil.which("hermes", path=str(Path(sys.executable).parent))
    assert path, "the hermes script is not installed next to this interpreter"
    return path


def environment(home: Path) -> dict[str, str]:
    return {"HERMES_HOME": str(home), "PATH": os.environ.get("PATH", ""), "TERM": "dumb",
            "HOME": str(home.parent)}


@pytest.fixture
def project(home: Path, server, tmp_path: Path) -> Path:  # type: ignore[no-untyped-def]
    (home / "config.yaml").write_text(yaml.safe_dump({
        "model": {"provider": "custom", "base_url": server.openai_base_url,
                  "default": "fake-model", "max_retries": 0},
        "sessions": {"auto_title": False}}))
    folder = tmp_path / "project"
    (folder / ".git").mkdir(parents=True)
    (folder / "src").mkdir()
    (folder / "AGENTS.md").write_text("Réponds toujours en français, sans exception.\n")
    return folder


def trusted(home: Path) -> list[str]:
    data = yaml.safe_load((home / "config.yaml").read_text()) or {}
    return (data.get("projects") or {}).get("trusted", [])


def chat_once(home: Path, cwd: Path, answer: str | None, server) -> str:  # type: ignore[no-untyped-def]
    """One interactive chat in ``cwd``: answer the trust question (None: expect none), send
    one message, quit; the screen up to the first prompt."""
    term = Terminal([hermes(), "chat"], environment(home), cwd=cwd)
    if answer is None:
        screen = term.read_until("› ")
    else:
        screen = term.read_until(QUESTION)
        term.type(answer + "\r")
        screen += term.read_until("› ")
    term.type("hello\r")
    term.read_until("Bonjour.")
    term.type("/quit\r")
    assert term.wait() == 0
    return screen


def test_yes_saves_the_trust_and_the_file_becomes_an_instruction(home, project, server) -> None:
    (project / ".hermes.md").write_text("Write the commit messages in French.\n")
    server.script(reply_text("Bonjour."), reply_text("Bonjour."))
    # in a subfolder: .hermes.md is read up to the git root, which is the folder trusted
    screen = chat_once(home, project / "src", "y", server)
    assert f"This folder is not trusted: {project}" in screen and ".hermes.md" in screen
    assert f"Trusted {project}" in screen
    assert trusted(home) == [str(project)]
    system = server.posts()[-1].body["messages"][0]["content"]
    assert sources(system) == [] and "should be followed" in system
    assert "## .hermes.md\n\nWrite the commit messages in French." in system
    assert QUESTION not in chat_once(home, project, None, server)  # trusted: never asked again


def test_no_continues_untrusted_and_is_not_asked_again(home, project, server) -> None:
    server.script(reply_text("Bonjour."), reply_text("Bonjour."))
    screen = chat_once(home, project, "n", server)
    assert "Continuing untrusted" in screen and trusted(home) == []
    system = server.posts()[-1].body["messages"][0]["content"]
    assert sources(system) == [SOURCE] and "should be followed" not in system
    again = chat_once(home, project, None, server)
    assert QUESTION not in again and f"note: {project} is not trusted" in again
    assert sources(server.posts()[-1].body["messages"][0]["content"]) == [SOURCE]


def test_chat_q_never_asks_and_stays_untrusted(home, project, server) -> None:
    server.script(reply_text("Bonjour."))
    done = subprocess.run([hermes(), "chat", "-q", "hello"], cwd=project, env=environment(home),
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert QUESTION not in done.stdout + done.stderr and "Bonjour." in done.stdout
    assert sources(server.posts()[-1].body["messages"][0]["content"]) == [SOURCE]
    assert trusted(home) == [] and not (home / "trust_asked").exists()


def test_the_home_folder_is_never_offered(home, server) -> None:
    (home / "config.yaml").write_text(yaml.safe_dump({
        "model": {"provider": "custom", "base_url": server.openai_base_url,
                  "default": "fake-model", "max_retries": 0},
        "sessions": {"auto_title": False}}))
    user_home = home.parent  # HOME in environment()
    (user_home / "AGENTS.md").write_text("Réponds toujours en français.\n")
    server.script(reply_text("Bonjour."))
    screen = chat_once(home, user_home, None, server)
    assert QUESTION not in screen and "never trusts it by itself" in screen
    assert trusted(home) == []
    assert sources(server.posts()[-1].body["messages"][0]["content"]) == [SOURCE]


def test_ctrl_d_at_the_question_ends_hermes_and_asks_again_next_time(home, project) -> None:
    term = Terminal([hermes(), "chat"], environment(home), cwd=project)
    term.read_until(QUESTION)
    term.type("\x04")  # Ctrl-D: no answer
    assert term.wait() != 0
    assert trusted(home) == [] and not (home / "trust_asked").exists()


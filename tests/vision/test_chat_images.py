"""Images in ``hermes chat``: ``/image PATH`` in a real pseudo-terminal (and ``/retry`` of
that message), an image path written in a message, and ``-q ... --image PATH``; each reaches the fake model as an image
part (the custom endpoint, told its model sees images)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from hermes_agent.testing.fake_llm import FakeLLMServer, reply_text

from .support import image_bytes, png, sent_images


def configure(home: Path, llm: FakeLLMServer) -> dict[str, str]:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(yaml.safe_dump({
        "model": {"provider": "custom", "base_url": llm.openai_base_url, "default": "m",
                  "max_retries": 0, "supports_vision": True},
        "sessions": {"auto_title": False}}))
    return {"HERMES_HOME": str(home), "PATH": os.environ.get("PATH", ""), "TERM": "dumb",
            "HOME": str(home.parent), "NO_PROXY": "127.0.0.1"}


def hermes() -> str:
    found = shutil.which("hermes", path=str(Path(sys.executable).parent))
    assert found, "the hermes script is not installed next to this interpreter"
    return found


@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")
def test_image_command_and_pasted_paths_in_a_pty(tmp_path: Path,
                                                 fake_llm: FakeLLMServer) -> None:
    from agent.pty_terminal import Terminal  # tests/agent's helper

    env = configure(tmp_path / "home", fake_llm)
    first, second = png(3, 3, (1, 2, 3)), png(4, 4, (9, 9, 9))
    shot = tmp_path / "my shot.png"
    shot.write_bytes(first)
    other = tmp_path / "other.png"
    other.write_bytes(second)
    fake_llm.script(reply_text("First seen."), reply_text("Seen again."),
                    reply_text("Second seen."), reply_text("Third seen."))
    term = Terminal([hermes(), "chat"], env, cwd=tmp_path)
    term.read_until("› ")
    term.type("/image my\\ shot.png\r")
    assert "Attached [image: my shot.png, 3x3" in term.read_until("› ")
    term.type("what is this?\r")
    assert "First seen." in term.read_until("› ")
    request = fake_llm.posts()[-1]
    [block] = sent_images(request)
    assert image_bytes(block, "chat") == first
    term.type("/retry\r")  # sent again with its image
    assert "Seen again." in term.read_until("› ")
    [block] = sent_images(fake_llm.posts()[-1])
    assert image_bytes(block, "chat") == first
    term.type(f"and {other}?\r")
    assert "Second seen." in term.read_until("› ")
    [block] = sent_images(fake_llm.posts()[-1])
    assert image_bytes(block, "chat") == second
    term.type(f"{other}\r")  # a path alone is a message, not a slash command
    assert "Third seen." in term.read_until("› ")
    assert sent_images(fake_llm.posts()[-1])
    term.type("/quit\r")
    assert term.wait() == 0


def test_query_with_an_image_option(tmp_path: Path, fake_llm: FakeLLMServer) -> None:
    env = configure(tmp_path / "home", fake_llm)
    picture = tmp_path / "pic.png"
    picture.write_bytes(png(7, 5))
    fake_llm.script(reply_text("Seven by five."))
    done = subprocess.run([hermes(), "chat", "-q", "size?", "--image", str(picture)],
                          capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0 and done.stdout == "Seven by five.\n", done.stderr
    [block] = sent_images(fake_llm.posts()[-1])
    assert image_bytes(block, "chat") == picture.read_bytes()
    missing = subprocess.run([hermes(), "chat", "-q", "size?", "--image",
                              str(tmp_path / "nope.png")],
                             capture_output=True, text=True, timeout=120, env=env)
    assert missing.returncode == 1 and "image not attached" in missing.stderr
    assert "nope.png" in missing.stderr and len(fake_llm.posts()) == 1

"""``hermes chat`` in a real pseudo-terminal: type a message, see the streamed answer, interrupt
a long answer with Ctrl-C, use a slash command, quit."""

from __future__ import annotations

import os
import re
import shutil
import sys
import time
from pathlib import Path

import pytest
import yaml

from hermes_agent.testing.fake_llm import reply_stall, reply_text, reply_tool_call

from .conftest import write_unreachable_config
from .pty_terminal import Terminal


def start_chat(home: Path, cwd: Path | None = None) -> Terminal:
    """``hermes chat`` in a pseudo-terminal with HERMES_HOME=home and a minimal environment,
    in ``cwd`` (default: the user's home folder, where no trust question is asked)."""
    hermes = shutil.which("hermes", path=str(Path(sys.executable).parent))
    assert hermes, "the hermes script is not installed next to this interpreter"
    env = {"HERMES_HOME": str(home), "PATH": os.environ.get("PATH", ""), "TERM": "dumb",
           "HOME": str(home.parent)}
    return Terminal([hermes, "chat"], env, cwd=cwd or home.parent)


@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")
def test_interactive_chat_in_a_pty(home: Path, calculator: Path, server) -> None:
    (home / "config.yaml").write_text(yaml.safe_dump({
        "model": {"provider": "custom", "base_url": server.openai_base_url,
                  "default": "fake-model", "max_retries": 0},
        "sessions": {"auto_title": False},  # the script answers the chat's requests only
        "plugins": {"enabled": ["calculator"]}}))
    server.script(reply_text("Hello from the fake model!"),
                  reply_stall("Once upon a time there was a very long story", stall=30),
                  reply_text("Short one."))
    hermes = shutil.which("hermes", path=str(Path(sys.executable).parent))
    assert hermes, "the hermes script is not installed next to this interpreter"
    env = {"HERMES_HOME": str(home), "PATH": os.environ.get("PATH", ""), "TERM": "dumb",
           "HOME": str(home.parent)}
    term = Terminal([hermes, "chat"], env, cwd=home.parent)
    banner = term.read_until("› ")
    assert "fake-model" in banner and "calculator: calculate, unit_convert" in banner
    term.type("hello there\r")
    assert "Hello from the fake model!" in term.read_until("› ")
    term.type("tell me a story\r")
    term.read_until("Once")
    started = time.monotonic()
    term.type("\x03")  # Ctrl-C
    screen = term.read_until("› ")
    assert "[interrupted]" in screen and time.monotonic() - started < 5
    term.type("/usage\r")
    assert "2 model calls" in term.read_until("› ")
    term.type("and now a short one\r")
    assert "Short one." in term.read_until("› ")
    posts = server.posts()
    assert posts[-1].body["messages"][-1]["content"] == "and now a short one"
    term.type("/quit\r")
    assert term.wait() == 0


@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")
def test_approval_and_clarify_questions_in_a_pty(home: Path, calculator: Path, server,
                                                 tmp_path: Path) -> None:
    work = tmp_path / "work"
    (work / "build").mkdir(parents=True)
    (work / "keep").mkdir()
    (home / "config.yaml").write_text(yaml.safe_dump({
        "model": {"provider": "custom", "base_url": server.openai_base_url,
                  "default": "fake-model", "max_retries": 0},
        "projects": {"trusted": [str(work)]},  # the user's own folder
        "sessions": {"auto_title": False}}))  # the script answers the chat's requests only
    server.script(reply_tool_call("terminal", {"command": "rm -rf build"}),
                  reply_text("Removed build."),
                  reply_tool_call("terminal", {"command": "rm -rf keep"}),
                  reply_text("Hello again."),
                  reply_tool_call("clarify", {"question": "Which colour?",
                                              "choices": ["red", "blue"]}),
                  reply_text("Blue it is."))
    hermes = shutil.which("hermes", path=str(Path(sys.executable).parent))
    assert hermes
    env = {"HERMES_HOME": str(home), "PATH": os.environ.get("PATH", ""), "TERM": "dumb",
           "HOME": str(home.parent)}
    term = Terminal([hermes, "chat"], env, cwd=work)
    term.read_until("› ")

    term.type("clean the build\r")  # approved once at the prompt
    assert "rm -rf build" in term.read_until("[d]eny: ")
    term.type("o\r")
    assert "Removed build." in term.read_until("› ")
    assert not (work / "build").exists()

    term.type("now remove keep\r")  # Ctrl-C at the prompt: denied at once, the turn stops
    term.read_until("[d]eny: ")
    started = time.monotonic()
    term.type("\x03")
    assert "[interrupted]" in term.read_until("› ")
    assert time.monotonic() - started < 5 and (work / "keep").exists()
    term.type("hello\r")  # the next line reaches the model: no stranded reader took it
    assert "Hello again." in term.read_until("› ")
    sent = server.posts()[-1].body["messages"]
    assert sent[-1] == {"role": "user", "content": "hello"}
    assert any("interrupted" in str(m.get("content")) for m in sent if m["role"] == "tool")

    term.type("pick a colour\r")  # clarify: answered by number
    assert "2. blue" in term.read_until("answer: ")
    term.type("2\r")
    assert "Blue it is." in term.read_until("› ")
    result = server.posts()[-1].body["messages"][-1]
    assert result["role"] == "tool" and '"user_response": "blue"' in result["content"]
    term.type("/quit\r")
    assert term.wait() == 0


@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")
def test_multi_line_input_and_the_history_file(home: Path, calculator: Path, server) -> None:
    (home / "config.yaml").write_text(yaml.safe_dump({
        "model": {"provider": "custom", "base_url": server.openai_base_url,
                  "default": "fake-model", "max_retries": 0},
        "sessions": {"auto_title": False}}))  # the script answers the chat's requests only
    server.script(reply_text("Got two lines."), reply_text("Got a block."))
    term = start_chat(home)
    term.read_until("› ")
    term.type("first line \\\r")  # a trailing backslash continues the message
    term.read_until("… ")
    term.type("second line\r")
    assert "Got two lines." in term.read_until("› ")
    term.type('"""\r')
    term.read_until("… ")
    term.type("def f():\r    return 1\r")
    term.type('"""\r')
    assert "Got a block." in term.read_until("› ")
    first, second = (p.body["messages"][-1]["content"] for p in server.posts())
    assert first == "first line \nsecond line"
    assert second == "def f():\n    return 1"
    term.type("/quit\r")
    assert term.wait() == 0
    assert "second line" in (home / "chat_history").read_text()


@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")
def test_a_failing_slash_command_keeps_the_chat_going(home: Path, calculator: Path,
                                                      server) -> None:
    boom = home / "plugins" / "boom"
    boom.mkdir()
    (boom / "plugin.yaml").write_text("name: boom\nversion: 1.0.0\n")
    (boom / "__init__.py").write_text(
        "def register(ctx):\n"
        "    def explode(raw):\n"
        "        raise RuntimeError('the boom plugin broke')\n"
        "    def leave(raw):\n"
        "        raise SystemExit(3)\n"
        "    ctx.register_command('explode', explode, 'always fails')\n"
        "    ctx.register_command('leave', leave, 'exits the process')\n")
    (home / "config.yaml").write_text(yaml.safe_dump({
        "model": {"provider": "custom", "base_url": server.openai_base_url,
                  "default": "fake-model", "max_retries": 0},
        "sessions": {"auto_title": False},  # the script answers the chat's requests only
        "plugins": {"enabled": ["calculator", "boom"]}}))
    server.script(reply_text("Still here."))
    term = start_chat(home)
    term.read_until("› ")
    term.type("/model x bogusprov\r")  # an unknown provider: an error line, not an exit
    screen = term.read_until("› ")
    assert "/model failed:" in screen and "bogusprov" in screen
    term.type("/model gpt-4.1 openai\r")  # a provider without its key
    assert "/model failed:" in term.read_until("› ")
    term.type("/explode\r")
    assert "/explode failed: RuntimeError: the boom plugin broke" in term.read_until("› ")
    term.type("/leave\r")
    # a plugin's command that calls sys.exit: the plugin is unloaded, the chat goes on
    assert "/leave failed: plugin 'boom' raised SystemExit and was unloaded; see " \
        "`hermes plugins doctor boom`" in term.read_until("› ")
    term.type("/explode\r")
    assert "Unknown command /explode." in term.read_until("› ")
    term.type("/model\r")  # the model in use did not change
    assert "model fake-model via custom" in term.read_until("› ")
    term.type("are you there?\r")
    assert "Still here." in term.read_until("› ")
    assert server.posts()[-1].body["model"] == "fake-model"
    term.type("/quit\r")
    assert term.wait() == 0


@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")
def test_a_status_line_shows_while_the_model_works(home: Path, calculator: Path,
                                                   server) -> None:
    (home / "config.yaml").write_text(yaml.safe_dump({
        "model": {"provider": "custom", "base_url": server.openai_base_url,
                  "default": "fake-model", "max_retries": 0},
        "sessions": {"auto_title": False}}))  # the script answers the chat's requests only
    server.script(reply_text("Done thinking.", delay=1.2))
    term = start_chat(home)
    term.read_until("› ")
    term.type("think hard\r")
    waiting = term.read_until("Done thinking.")
    assert "thinking…" in waiting
    assert re.search(r"\r +\rDone thinking\.$", waiting)  # blanked before the answer
    term.read_until("› ")
    term.type("/quit\r")
    assert term.wait() == 0


@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")
def test_retries_show_in_the_interactive_chat_before_the_error(home: Path) -> None:
    write_unreachable_config(home, max_retries=1)
    term = start_chat(home)
    term.read_until("› ")
    term.type("anyone there?\r")
    screen = term.read_until("› ")
    retry = screen.index("↻ custom: retrying in 0")
    assert "(attempt 2/2: connection refused)" in screen[retry:]
    assert screen.index("Error: ", retry) > retry
    term.type("/quit\r")
    assert term.wait() == 0

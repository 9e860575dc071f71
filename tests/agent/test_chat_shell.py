"""``hermes`` as a shell runs it: a real process on a throwaway home, the fake model server,
standard input piped or closed. Chat's options given to bare ``hermes``, the resume line,
piped standard input."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hermes_agent.testing.fake_llm import FakeLLMServer, reply_text

RESUME = re.compile(r"^Resume this session with: hermes --resume (\S+)$", re.M)


@pytest.fixture
def hermes(home: Path, server: FakeLLMServer):  # type: ignore[no-untyped-def]
    """``hermes(*args, input=None) -> CompletedProcess``: the console script in a fresh
    process, standard input /dev/null unless ``input`` (bytes or text) is piped in."""
    (home / "config.yaml").write_text(
        f"model:\n  provider: custom\n  base_url: {server.openai_base_url}\n"
        "  default: fake-model\n  max_retries: 0\nsessions:\n  auto_title: false\n")
    env = {**os.environ, "HERMES_HOME": str(home), "NO_PROXY": "127.0.0.1,localhost"}
    env.pop("HERMES_RAISE_ERRORS", None)

    def run(*args: str, input: Any = None) -> subprocess.CompletedProcess[str]:
        code = ("import sys; from hermes_agent.cli.root import main; "
                "sys.argv[0] = 'hermes'; sys.exit(main())")
        kwargs: dict[str, Any] = {"input": input} if input is not None else {
            "stdin": subprocess.DEVNULL}
        if isinstance(input, bytes):
            return subprocess.run([sys.executable, "-c", code, *args], capture_output=True,
                                  timeout=120, env=env, **kwargs)  # type: ignore[return-value]
        return subprocess.run([sys.executable, "-c", code, *args], capture_output=True,
                              text=True, timeout=120, env=env, **kwargs)

    return run


def _user_message(server: FakeLLMServer) -> str:
    return str(server.last.body["messages"][-1]["content"])


def test_chats_options_work_on_bare_hermes_and_every_chat_ends_with_the_resume_line(
        hermes, server) -> None:
    server.script(reply_text("kiwi noted"))
    first = hermes("-q", "remember kiwi", "-m", "fake-model")
    assert first.returncode == 0, first.stderr
    assert first.stdout == "kiwi noted\n"  # the answer alone on stdout
    session = RESUME.search(first.stderr)
    assert session, first.stderr
    server.script(reply_text("it was kiwi"), reply_text("still kiwi"))
    for args in (("--resume", session.group(1)), ("-c",)):
        again = hermes(*args, "-q", "which fruit?")
        assert again.returncode == 0, again.stderr
        contents = [m["content"] for m in server.last.body["messages"]]
        assert contents[1:3] == ["remember kiwi", "kiwi noted"]
        assert RESUME.search(again.stderr).group(1) == session.group(1)  # type: ignore[union-attr]
    bad = hermes("--no-such-flag")
    assert bad.returncode == 2 and "No such option '--no-such-flag'" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_the_interactive_chat_prints_the_resume_line_when_it_ends(hermes, server,
                                                                  monkeypatch) -> None:
    """Through the REPL (stdin is not a terminal here, so the chat is driven in-process with
    the terminal check answered yes)."""
    import io

    from hermes_agent.cli import root as cli_root
    from hermes_agent.builtin_plugins.agent.chat import command

    server.script(reply_text("hello there"))
    monkeypatch.setattr(command, "stdin_is_tty", lambda: True)
    monkeypatch.setattr("sys.stdin", io.StringIO("hi\n"))
    out = io.StringIO()
    monkeypatch.setattr("sys.stdout", out)
    assert cli_root.main([]) == 0
    lines = out.getvalue().splitlines()
    assert RESUME.match(lines[-1]), lines
    assert server.last.body["messages"][-1]["content"] == "hi"


def test_piped_stdin_is_appended_to_the_question(hermes, server) -> None:
    server.script(reply_text("a summary"))
    done = hermes("chat", "-q", "summarise this", input="line one\nline two\n")
    assert done.returncode == 0, done.stderr
    assert _user_message(server) == "summarise this\n\nline one\nline two"


def test_dash_q_dash_and_no_q_read_the_message_from_stdin(hermes, server) -> None:
    server.script(reply_text("one"), reply_text("two"))
    assert hermes("chat", "-q", "-", input="what is up?\n").returncode == 0
    assert _user_message(server) == "what is up?"
    assert hermes(input="from a pipe\n").returncode == 0  # bare hermes, no -q
    assert _user_message(server) == "from a pipe"
    empty = hermes("chat", "-q", "-")  # /dev/null
    assert empty.returncode == 1 and "nothing to send" in empty.stderr
    assert len(server.posts()) == 2


def test_too_much_stdin_is_a_clear_error_and_nothing_is_sent(hermes, server) -> None:
    from hermes_agent.builtin_plugins.agent.chat.command import MAX_STDIN_BYTES

    done = hermes("chat", "-q", "summarise", input=b"x" * (MAX_STDIN_BYTES + 1))
    assert done.returncode == 1
    assert b"more than 1,000,000 bytes" in done.stderr and b"Traceback" not in done.stderr
    assert server.posts() == []


def _interactive(monkeypatch: pytest.MonkeyPatch, *args: str, typed: str) -> str:
    """Run ``hermes *args`` in-process as at a terminal, ``typed`` as the keyboard."""
    import io

    from hermes_agent.cli import root as cli_root
    from hermes_agent.builtin_plugins.agent.chat import command

    monkeypatch.setattr(command, "stdin_is_tty", lambda: True)
    monkeypatch.setattr("sys.stdin", io.StringIO(typed))
    out = io.StringIO()
    with monkeypatch.context() as patched:
        patched.setattr("sys.stdout", out)
        assert cli_root.main(list(args)) == 0
    return out.getvalue()


def test_a_resumed_session_keeps_the_model_chosen_with_slash_model(hermes, server,
                                                                   monkeypatch) -> None:
    server.script(reply_text("answered by the other model"))
    shown = _interactive(monkeypatch, typed="/model other-model\nhello\n")
    session = RESUME.search(shown).group(1)  # type: ignore[union-attr]
    assert server.last.body["model"] == "other-model"
    server.script(reply_text("still the other model"))
    done = hermes("--resume", session, "-q", "and now?")
    assert done.returncode == 0, done.stderr
    assert server.last.body["model"] == "other-model"  # not model.default (fake-model)
    server.script(reply_text("explicit"), reply_text("kept"))
    assert hermes("--resume", session, "-m", "third-model", "-q", "x").returncode == 0
    assert server.last.body["model"] == "third-model"  # --model wins, and is remembered
    assert hermes("--resume", session, "-q", "y").returncode == 0
    assert server.last.body["model"] == "third-model"


def test_continue_picks_the_session_used_last_and_a_resumed_chat_shows_a_recap(
        hermes, server, monkeypatch) -> None:
    server.script(reply_text("about apples"), reply_text("about pears"),
                  reply_text("more on apples"))
    older = RESUME.search(hermes("-q", "tell me about apples").stderr).group(1)  # type: ignore[union-attr]
    newer = RESUME.search(hermes("-q", "tell me about pears").stderr).group(1)  # type: ignore[union-attr]
    assert older != newer
    again = hermes("--resume", older, "-q", "and their colour?")  # the older one, used last
    assert RESUME.search(again.stderr).group(1) == older  # type: ignore[union-attr]
    shown = _interactive(monkeypatch, "-c", typed="")
    recap = shown[shown.index("Resumed session"):].splitlines()
    assert recap[0] == f"Resumed session {older}: 4 messages"
    assert recap[1:3] == ["  you: and their colour?", "  hermes: more on apples"]
    assert RESUME.search(shown).group(1) == older  # type: ignore[union-attr]


def test_an_unknown_toolset_is_an_error_naming_the_known_ones(hermes, server, home) -> None:
    for wrong, hint in (("bogus", "unknown toolset 'bogus'; known toolsets: "),
                        ("fiel,terminal", "unknown toolset 'fiel' (did you mean 'file'?)")):
        done = hermes("chat", "--toolsets", wrong, "-q", "hi")
        assert done.returncode == 2 and hint in done.stderr, done.stderr
        assert "terminal" in done.stderr.split("known toolsets: ")[1]
    config = home / "config.yaml"
    config.write_text(config.read_text() + "toolsets: [termnal]\n")
    done = hermes("-q", "hi")
    assert done.returncode == 1
    assert "config.yaml `toolsets`: unknown toolset 'termnal' (did you mean 'terminal'?)" \
        in done.stderr
    assert server.posts() == []  # nothing ran with a silently empty tool list


def test_config_set_toolsets_checks_the_names_against_the_loaded_plugins(hermes, home) -> None:
    config = home / "config.yaml"
    config.write_text(config.read_text() + "mcp_servers:\n  demo:\n    command: /bin/false\n")
    before = config.read_text()
    refused = hermes("config", "set", "toolsets", "[bogus]")
    assert refused.returncode == 1
    assert "not saved; toolsets: unknown toolset 'bogus'" in refused.stderr
    assert config.read_text() == before
    # an MCP server's toolset is known before the server ever starts
    saved = hermes("config", "set", "toolsets", "[mcp-demo, file]")
    assert saved.returncode == 0, saved.stderr
    assert "toolsets:\n- mcp-demo\n- file" in config.read_text() or \
        "toolsets: [mcp-demo, file]" in config.read_text()

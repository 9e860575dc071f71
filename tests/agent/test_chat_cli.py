"""``hermes chat`` through the click root, in-process, against the fake provider server."""

from __future__ import annotations

import json

import pytest

import hermes_agent
from hermes_agent.cli import root as cli_root
from hermes_agent.testing.fake_llm import reply_error, reply_text, reply_tool_call

from .conftest import write_unreachable_config


@pytest.fixture
def cli(kernel_for):  # type: ignore[no-untyped-def]
    """``cli(*args) -> exit code``; every invocation gets a fresh kernel on the same home."""
    return lambda *args: cli_root.main(list(args), kernel_factory=kernel_for)


def test_chat_q_streams_the_answer_and_exits_zero(cli, server, capsys) -> None:
    server.script(reply_tool_call("calculate", {"expression": "7*6"}), reply_text("It is 42."))
    assert cli("chat", "-q", "what is 7*6?") == 0
    out, err = capsys.readouterr()
    assert out == "It is 42.\n"  # stdout is the answer alone; tool activity goes to stderr
    lines = err.splitlines()
    assert lines[0] == '  ⚙ calculate {"expression": "7*6"}'
    assert lines[1:] == [f"Resume this session with: hermes --resume {lines[1].split()[-1]}"]
    assert server.posts()[0].body["stream"] is True


def test_chat_q_failure_exits_non_zero_with_the_fix(cli, server, capsys) -> None:
    server.script(reply_error(401, "bad key"))
    assert cli("chat", "-q", "hi") == 1
    err = capsys.readouterr().err
    assert "HTTP 401" in err and "Fix: check the API key" in err


def test_resume_by_id_and_by_title_and_continue(cli, server, capsys, kernel_for) -> None:
    server.script(reply_text("first answer"))
    assert cli("chat", "-q", "remember the word kiwi") == 0
    kernel = kernel_for()
    from hermes_agent.builtin_plugins.agent.store_link import SessionLink, active_store

    link = SessionLink(active_store(kernel))
    session_id = link.latest("cli")
    link.set_title(session_id, "fruit talk")
    for args in (("--resume", session_id), ("--resume", "fruit talk"), ("--continue",)):
        server.script(reply_text("kiwi"))
        assert cli("chat", *args, "-q", "which word?") == 0
        sent = [m["content"] for m in server.last.body["messages"]]
        assert sent[1:3] == ["remember the word kiwi", "first answer"]
    assert len(link.conversation(session_id)) == 8
    capsys.readouterr()
    assert cli("chat", "--resume", "no-such-session", "-q", "x") == 1
    assert "no session 'no-such-session' found" in capsys.readouterr().err


def test_json_event_stream(cli, server, capsys) -> None:
    server.script(reply_tool_call("calculate", {"expression": "1+2"}), reply_text("3"))
    assert cli("chat", "--json", "-q", "1+2?") == 0
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    kinds = [e["type"] for e in events]
    assert kinds[0] == "session" and kinds[-1] == "turn_end"
    assert ["tool_start", "tool_end"] == [k for k in kinds if k.startswith("tool_")]
    assert "".join(e["text"] for e in events if e["type"] == "text_delta") == "3"
    assert events[-1]["completed"] is True and events[-1]["final_response"] == "3"


def test_toolsets_flag_limits_the_tools_offered(cli, server) -> None:
    server.script(reply_text("ok"))
    assert cli("chat", "--toolsets", "calculator", "-q", "hi") == 0
    names = sorted(t["function"]["name"] for t in server.last.body["tools"])
    assert names == ["calculate", "unit_convert"]


def test_hermes_alone_without_a_provider_says_how_to_configure_one(home, monkeypatch,
                                                                   capsys) -> None:
    monkeypatch.setattr("sys.stdin.isatty", lambda: False, raising=False)
    for var in ("OPENROUTER_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "HERMES_MODEL",
                "HERMES_INFERENCE_PROVIDER", "NOUS_API_KEY", "GEMINI_API_KEY",
                "GOOGLE_API_KEY", "DEEPSEEK_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    assert cli_root.main([]) == 1
    err = capsys.readouterr().err
    assert "No model provider is configured" in err and "hermes setup" in err
    assert len(err.splitlines()) < 25  # one screen


def test_the_console_script_closes_the_store_and_freezes_gc_before_exit(home, server) -> None:
    """As the process entry point, ``main()`` closes what the command opened (the session
    store's last connection checkpoints and removes the WAL file) and freezes the garbage
    collector so the interpreter's shutdown skips full collections."""
    import os
    import subprocess
    import sys

    (home / "config.yaml").write_text(
        f"model:\n  provider: custom\n  base_url: {server.openai_base_url}\n"
        "  default: fake-model\n  max_retries: 0\n")
    server.script(reply_text("pong"))
    code = ("import gc, sys\n"
            "sys.argv = ['hermes', 'chat', '-q', 'ping']\n"
            "from hermes_agent.cli.root import main\n"
            "code = main()\n"
            "print('frozen', gc.get_freeze_count() > 0, 'code', code)\n")
    env = {**os.environ, "NO_PROXY": "127.0.0.1,localhost"}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, env=env)
    assert proc.stdout.splitlines() == ["pong", "frozen True code 0"], proc.stderr
    assert (home / "state.db").exists() and not (home / "state.db-wal").exists()


def test_a_second_chat_q_without_tools_loads_only_what_it_uses(home, server) -> None:
    """What a plain answer does not need stays unloaded once the first run has remembered
    the SOUL.md scan: the tool machinery, the injection scanner, session search, the
    interactive prompts, and the CA bundle for a plain-http server."""
    import os
    import subprocess
    import sys

    (home / "config.yaml").write_text(
        f"model:\n  provider: custom\n  base_url: {server.openai_base_url}\n"
        "  default: fake-model\n  max_retries: 0\n")
    code = ("import sys\n"
            "from hermes_agent.cli.root import main\n"
            "code = main(['chat', '-q', 'ping'])\n"
            "from hermes_agent.builtin_plugins.models import nettrack\n"
            "loaded = [m for m in ('hermes_agent.builtin_plugins.agent.tool_exec',\n"
            "    'hermes_agent.builtin_plugins.agent.injection',\n"
            "    'hermes_agent.builtin_plugins.sessions.query',\n"
            "    'hermes_agent.builtin_plugins.agent.chat.questions')\n"
            "    if m in sys.modules]\n"
            "print('code', code, 'loaded', loaded,\n"
            "      'cas', nettrack._shared_ssl_context().cert_store_stats()['x509'])\n")
    env = {**os.environ, "NO_PROXY": "127.0.0.1,localhost"}
    runs = []
    for _ in range(2):
        server.script(reply_text("pong"))
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              timeout=120, env=env)
        runs.append(proc.stdout.splitlines()[-1:])
    assert runs[1] == ["code 0 loaded [] cas 0"], (runs, proc.stderr)
    assert "injection" in runs[0][0]  # the first run scanned SOUL.md


def test_main_with_arguments_leaves_the_process_alone(cli, server) -> None:
    """``main(argv)`` is a call inside a longer-lived process: nothing is frozen and the
    collector's thresholds stay as the process set them."""
    import gc

    server.script(reply_text("ok"))
    before, thresholds = gc.get_freeze_count(), gc.get_threshold()
    assert cli("chat", "-q", "hi") == 0
    assert gc.get_freeze_count() == before and gc.get_threshold() == thresholds


def test_the_console_script_collects_garbage_in_larger_batches(monkeypatch, capsys) -> None:
    import gc

    saved = gc.get_threshold()
    monkeypatch.setattr("sys.argv", ["hermes", "--version"])
    try:
        assert cli_root.main() == 0
        assert gc.get_threshold()[0] == cli_root.GC_YOUNG_THRESHOLD > saved[0]
    finally:
        gc.set_threshold(*saved)
        gc.unfreeze()
    assert capsys.readouterr().out.startswith("hermes ")


def test_model_and_max_turns_flags_and_the_stored_usage(cli, server, kernel_for) -> None:
    usage = {"input_tokens": 1000, "output_tokens": 100}
    server.script(reply_tool_call("calculate", {"expression": "1+1"}, usage=usage),
                  reply_text("2", usage=usage))
    assert cli("chat", "--model", "gpt-4o-mini", "--max-turns", "1", "-q", "1+1?") == 0
    first, last = server.posts()
    assert first.body["model"] == last.body["model"] == "gpt-4o-mini"
    assert "tools" in first.body and "tools" not in last.body  # the budget's last call
    from hermes_agent.builtin_plugins.agent.store_link import active_store

    store = active_store(kernel_for())
    session = store.get_session(store.list_sessions()[0]["id"])
    assert (session["input_tokens"], session["output_tokens"]) == (2000, 200)
    assert session["api_call_count"] == 2 and session["cost_status"] == "estimated"
    assert session["estimated_cost_usd"] == pytest.approx(2 * (1000 * 0.15 + 100 * 0.60) / 1e6)
    assistant = [m for m in store.get_messages(session["id"]) if m["role"] == "assistant"]
    assert [m["token_count"] for m in assistant] == [100, 100]


def test_a_model_without_a_price_costs_unknown_not_zero(cli, server, capsys) -> None:
    usage = {"input_tokens": 1000, "output_tokens": 100}
    server.script(reply_text("hi", usage=usage))
    assert cli("chat", "-q", "hi") == 0  # fake-model: no price
    capsys.readouterr()
    assert cli("sessions", "stats") == 0
    out = capsys.readouterr().out
    assert "cost unknown" in out and "$0.0000" not in out
    assert cli("sessions", "stats", "--json") == 0
    total = json.loads(capsys.readouterr().out)["total"]
    assert total["estimated_cost_usd"] is None and total["unpriced_sessions"] == 1
    assert cli("sessions", "show", "--json", _latest_session(cli, capsys)) == 0
    assert json.loads(capsys.readouterr().out)["estimated_cost_usd"] is None
    assert cli("sessions", "show", _latest_session(cli, capsys)) == 0
    assert "cost unknown" in capsys.readouterr().out

    server.script(reply_text("priced", usage=usage))
    assert cli("chat", "--model", "gpt-4o-mini", "-q", "hi") == 0
    capsys.readouterr()
    assert cli("sessions", "stats") == 0
    lines = capsys.readouterr().out.splitlines()
    known = (1000 * 0.15 + 100 * 0.60) / 1e6
    assert f"cost ${known:.4f} estimated, plus unknown for 1 session whose model" in lines[1]
    rows = {line.split()[0]: line for line in lines[2:]}
    assert "unknown" in rows["fake-model"] and f"${known:.4f}" in rows["gpt-4o-mini"]


def _latest_session(cli, capsys) -> str:  # type: ignore[no-untyped-def]
    assert cli("sessions", "list", "--json") == 0
    return str(json.loads(capsys.readouterr().out)[0]["id"])


def test_an_unknown_provider_is_an_error_listing_the_installed_ones(cli, server, capsys) -> None:
    assert cli("chat", "--provider", "nosuch", "-q", "hi") == 1
    err = capsys.readouterr().err
    assert "nosuch" in err and "custom" in err and "anthropic" in err
    assert server.posts() == []


def test_with_nobody_to_ask_a_dangerous_command_is_denied(cli, server, tmp_path, monkeypatch,
                                                          capsys) -> None:
    (tmp_path / "build").mkdir()
    monkeypatch.chdir(tmp_path)
    server.script(reply_tool_call("terminal", {"command": "rm -rf build"}),
                  reply_text("I could not delete it."))
    assert cli("chat", "-q", "delete build") == 0
    out, err = capsys.readouterr()
    assert out == "I could not delete it.\n"
    line, resume = err.splitlines()  # one line per call, with its denial; the resume line
    assert resume.startswith("Resume this session with: hermes --resume ")
    assert line.startswith('  ⚙ terminal {"command": "rm -rf build"} → blocked: ')
    assert (tmp_path / "build").is_dir()
    result = json.loads(server.last.body["messages"][-1]["content"])
    assert result["status"] == "blocked" and "nobody can approve it here" in result["error"]


def test_retries_are_shown_as_they_happen_before_the_error(home, calculator, capsys) -> None:
    write_unreachable_config(home, max_retries=2)
    assert cli_root.main(["chat", "-q", "hello?"]) == 1
    out, err = capsys.readouterr()
    lines = err.splitlines()
    assert out == ""
    assert lines[0].startswith("  ↻ custom: retrying in 0")
    assert lines[0].endswith("(attempt 2/3: connection refused)")
    assert lines[1].startswith("  ↻ custom: retrying in 0")
    assert lines[1].endswith("(attempt 3/3: connection refused)")
    assert lines[2].startswith("Error: ") and "gave up after 3 attempts" in err

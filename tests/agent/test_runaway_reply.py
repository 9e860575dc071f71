"""A reply that loops is stopped and the user told (the CLI's notice, the stored message's
``finish_reason``); token counts a server does not report are estimated and shown with ``~``
(``/usage``, ``hermes sessions show``, the turn result)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from hermes_agent.kits.sql.values import usage_estimated
from hermes_agent.cli import root as cli_root
from hermes_agent.builtin_plugins.agent.chat.slash import _usage
from hermes_agent.builtin_plugins.agent.loop import Agent
from hermes_agent.testing.fake_llm import reply_looping, reply_text

PARAGRAPH = ("I will now check the configuration file again to make sure that every value is "
             "what we expect before continuing with the next step of the plan.\n\n")


@pytest.fixture
def cli(kernel_for):  # type: ignore[no-untyped-def]
    return lambda *args: cli_root.main(list(args), kernel_factory=kernel_for)


def test_a_looping_reply_is_stopped_noticed_and_stored(cli, server, capsys, kernel_for) -> None:
    looping = reply_looping(PARAGRAPH, copies=200, intro="Let me look.\n\n")
    server.script(looping)
    assert cli("chat", "-q", "fix the config") == 0
    out, err = capsys.readouterr()
    assert "kept repeating itself, so the reply was stopped" in err
    assert out.startswith("Let me look.\n\n" + PARAGRAPH) and len(out) < len(looping.text) / 5
    assert server.last.hung_up
    kernel = kernel_for()
    from hermes_agent.builtin_plugins.agent.store_link import SessionLink, active_store

    store = active_store(kernel)
    session_id = SessionLink(store).latest("cli")
    [stored] = [m for m in store.get_messages(session_id) if m["role"] == "assistant"]
    assert stored["content"] == "Let me look.\n\n" + PARAGRAPH.rstrip()
    assert stored["finish_reason"] == "repetition"


def test_usage_a_server_does_not_report_is_estimated_and_shown_with_tilde(
        cli, server, capsys, kernel_for) -> None:
    agent = Agent(kernel_for())
    server.script(reply_text("An answer of forty characters, or so..", report_usage=False))
    events: list[dict[str, Any]] = []
    turn = agent.run_conversation("hello", on_event=events.append)
    assert turn.usage.estimated and turn.usage.output_tokens == 10
    assert turn.usage.input_tokens > 0 and turn.to_dict()["usage"]["estimated"] is True
    assert [e["usage"]["estimated"] for e in events if e["type"] == "assistant"] == [True]
    shown = _usage(SimpleNamespace(agent=agent), "")
    assert "~10 output tokens" in shown and "estimated from the text" in shown
    session = agent.sessions.get(agent.session_id)
    assert usage_estimated(session) and session["output_tokens"] == 10
    capsys.readouterr()
    assert cli("sessions", "show", agent.session_id) == 0
    assert f"~{session['input_tokens']}+10 tokens" in capsys.readouterr().out


def test_reported_usage_is_not_marked(server, kernel_for) -> None:
    agent = Agent(kernel_for())
    server.script(reply_text("hi"))
    turn = agent.run_conversation("hello")
    assert not turn.usage.estimated and turn.usage.output_tokens > 0
    assert not usage_estimated(agent.sessions.get(agent.session_id))
    assert "~" not in _usage(SimpleNamespace(agent=agent), "")


def test_a_key_the_provider_echoes_never_reaches_the_cli_or_state_db(
        server, home, calculator, monkeypatch, capsys) -> None:
    from hermes_agent.testing import make_kernel
    from hermes_agent.testing.fake_llm import reply_error

    from .conftest import agent_config

    key = "sk-live-abcdef0123456789-SECRET"
    config = agent_config(server)
    config["model"]["api_key"] = key
    server.script(reply_error(401, "Incorrect API key provided: {authorization}"))
    assert cli_root.main(["chat", "-q", "hello"], kernel_factory=lambda: make_kernel(
        home, config=config, env={"HERMES_HOME": str(home)}, builtins=True)) == 1
    out, err = capsys.readouterr()
    assert key in server.last.headers["authorization"]
    assert "Incorrect API key provided: Bearer ***" in err and key not in out + err
    stored = b"".join(p.read_bytes() for p in home.glob("state.db*"))
    assert stored and key.encode() not in stored

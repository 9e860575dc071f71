"""The chat's slash commands against a real agent, session store and fake model server."""

from __future__ import annotations

from typing import Any

from hermes_agent.builtin_plugins.agent.chat.slash import QUIT, ChatState, run_slash
from hermes_agent.builtin_plugins.agent.loop import Agent
from hermes_agent.testing import HookRecorder
from hermes_agent.testing.fake_llm import reply_text


def chat(kernel_for: Any) -> ChatState:
    kernel = kernel_for()
    return ChatState(Agent(kernel), kernel)


def test_help_lists_builtin_and_plugin_commands(kernel_for) -> None:
    kernel = kernel_for()

    async def shout(raw: str) -> str:
        return raw.upper()

    def register(ctx: Any) -> None:
        ctx.register_command("shout", shout, "say it loudly")
        ctx.register_command("broken", lambda raw: 1 / 0, "always fails")

    assert kernel.register_plugin(register, "loud").state == "loaded"
    state = ChatState(Agent(kernel), kernel)
    text = run_slash(state, "/help")
    for name in ("/new", "/reset", "/model", "/tools", "/usage", "/title", "/retry", "/undo",
                 "/quit"):
        assert name in text
    lines = text.splitlines()
    assert lines[0].split() == ["COMMAND", "DESCRIPTION", "FROM"] and "/plugins" in text
    shout = next(line for line in lines if "/shout" in line)
    assert shout.split(None, 1)[1].split() == ["say", "it", "loudly", "loud"]
    column = lines[0].index("DESCRIPTION")  # every description starts in the same column
    assert all(line[column - 2:column] == "  " and line[column] != " " for line in lines[1:])
    assert {line.rindex(" ") + 1 for line in lines[1:]} == {lines[0].index("FROM")}
    assert run_slash(state, "/shout hey there") == "HEY THERE"  # async handler
    assert run_slash(state, "/broken") == "/broken failed: ZeroDivisionError: division by zero"
    assert run_slash(state, "/modle") == "Unknown command /modle. Did you mean /model? /help lists the commands."
    assert run_slash(state, "/?") == text


def test_tools_and_plugins_show_what_the_model_can_call(kernel_for) -> None:
    state = chat(kernel_for)
    tools = run_slash(state, "/tools")
    rows = tools.splitlines()[2:]
    name_width = max(len(row.split()[0]) for row in rows if not row.startswith("  note:")) + 2
    assert f"  {'calculate':<{name_width}}calculator, calculator  " in tools
    assert all(len(line) <= 2 + name_width + 24 + 60 for line in tools.splitlines()
               if not line.startswith("  note:"))
    cut = [line for line in tools.splitlines() if line.endswith("…")]
    assert cut, "long descriptions end with an ellipsis"
    assert "read_file" in tools and tools.startswith(f"{len(state.agent.tool_names)} tools:")
    plugins = run_slash(state, "/plugins")
    assert "✓ calculator v1.0.0 (2 tools, 1 hook)" in plugins


def test_new_and_reset_finalize_the_session_and_start_another(kernel_for, server) -> None:
    state = chat(kernel_for)
    agent = state.agent
    recorder = HookRecorder(state.kernel, ["on_session_start", "on_session_finalize",
                                           "on_session_reset"])
    server.script(reply_text("one"), reply_text("two"), reply_text("three"))
    agent.run_conversation("first")
    first = agent.session_id
    assert run_slash(state, "/new") == f"Started a new session {agent.session_id}."
    second = agent.session_id
    assert second != first and agent.history == []
    agent.run_conversation("second")
    assert run_slash(state, "/reset") == f"Conversation reset; new session {agent.session_id}."
    agent.run_conversation("third")
    assert recorder.names() == ["on_session_start", "on_session_finalize", "on_session_reset",
                                "on_session_start", "on_session_finalize", "on_session_reset",
                                "on_session_start"]
    finalize = recorder.payloads("on_session_finalize")
    reset = recorder.payloads("on_session_reset")
    assert finalize[0]["session_id"] == first and finalize[0]["new_session_id"] == second
    assert [p["reason"] for p in reset] == ["new_session", "reset"]
    assert reset[0]["old_session_id"] == first and reset[0]["new_session_id"] == second
    assert server.posts()[-1].body["messages"][1:] == [{"role": "user", "content": "third"}]
    assert agent.sessions.get(first)["end_reason"] == "new_session"


def test_model_switches_the_next_request_and_keeps_the_frozen_prompt(kernel_for, server,
                                                                     home) -> None:
    state = chat(kernel_for)
    agent = state.agent
    assert run_slash(state, "/model").startswith("model fake-model via custom (http://127.0.0.1:")
    server.script(reply_text("a"), reply_text("b"))
    agent.run_conversation("hi")
    prompt = agent.system_prompt
    (home / "SOUL.md").write_text("You are a pirate.\n")  # a rebuilt prompt would differ
    assert run_slash(state, "/model other-model") == "Now using other-model via custom."
    agent.run_conversation("again")
    first, second = server.posts()
    assert first.body["model"] == "fake-model" and second.body["model"] == "other-model"
    assert second.body["messages"][0] == first.body["messages"][0] == {
        "role": "system", "content": prompt}
    assert agent.sessions.get(agent.session_id)["system_prompt"] == prompt
    assert run_slash(state, "/model custom:third") == "Now using third via custom."


def test_usage_and_title(kernel_for, server) -> None:
    state = chat(kernel_for)
    assert run_slash(state, "/title") == "This session has no title; /title TEXT sets one."
    assert run_slash(state, "/title early") == "Send a message first; the session is created with it."
    server.script(reply_text("hello", usage={"input_tokens": 120, "output_tokens": 7}))
    state.agent.run_conversation("hi")
    usage = run_slash(state, "/usage")
    assert "1 model call, 120 input tokens" in usage and "7 output tokens" in usage
    # the next request's size, as the compression trigger counts it: 120 + the answer "hello"
    # (5 characters: 2 tokens, rounded up, + 4 for the message)
    assert "context: 126 of 64,000 tokens before compression (128,000-token window), " \
           "0 compressions so far" in usage
    assert run_slash(state, "/title Release notes") == "Title set: Release notes"
    assert run_slash(state, "/title") == "title: Release notes"
    assert state.agent.sessions.resolve("Release notes") == state.agent.session_id


def test_retry_and_undo_rewind_the_history_and_the_store(kernel_for, server) -> None:
    state = chat(kernel_for)
    agent = state.agent
    assert run_slash(state, "/undo") == "Nothing to undo."
    assert run_slash(state, "/retry") == "Nothing to retry."
    server.script(reply_text("one"), reply_text("two"), reply_text("two, again"))
    agent.run_conversation("first")
    agent.run_conversation("second")
    assert run_slash(state, "/retry") is None and state.resend == "second"
    assert [m["content"] for m in agent.history] == ["first", "one"]
    agent.run_conversation(state.resend)
    stored = agent.sessions.conversation(agent.session_id)
    assert [m["content"] for m in stored] == ["first", "one", "second", "two, again"]
    assert run_slash(state, "/undo") == "Removed the last exchange ('second')."
    stored = agent.sessions.conversation(agent.session_id)
    assert [m["content"] for m in stored] == ["first", "one"] == [m["content"] for m in agent.history]


def test_quit_and_exit_leave(kernel_for) -> None:
    state = chat(kernel_for)
    assert run_slash(state, "/exit") is QUIT and state.quit
    assert run_slash(chat(kernel_for), "/quit") is QUIT


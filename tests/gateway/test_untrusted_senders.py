"""On a platform open to anyone, a message from someone the owner did not list is untrusted:
stored with its provenance, and the turn it starts is tainted (a command needs approval,
which a stranger's chat cannot give). A listed user's message is the owner's."""

from __future__ import annotations

import asyncio
import json

from hermes_agent.api import session_store
from hermes_agent.builtin_plugins.gateway.access import AccessPolicy
from hermes_agent.testing.fake_llm import reply_text, reply_tool_call

from .conftest import running


def test_only_unlisted_senders_of_an_open_platform_are_untrusted() -> None:
    open_to_all = AccessPolicy("testchat", {"allowed_users": ["alice"], "allow_all_users": True},
                               {})
    assert open_to_all.untrusted_source("testchat", "alice") is None
    assert open_to_all.untrusted_source("testchat", "42", "mallory") == "platform:testchat:mallory"
    listed_only = AccessPolicy("testchat", {"allowed_users": ["alice"]}, {})
    assert listed_only.untrusted_source("testchat", "alice") is None


def test_a_strangers_message_taints_the_turn(kernel_for, server) -> None:
    kernel = kernel_for(platforms={"testchat": {"enabled": True, "allowed_users": ["alice"],
                                                "allow_all_users": True}},
                        toolsets=["terminal"])
    server.script(reply_tool_call("terminal", {"command": "echo it-ran"}),
                  reply_text("could not"),
                  reply_tool_call("terminal", {"command": "echo it-ran"}),
                  reply_text("done"))

    async def scenario() -> None:
        async with running(kernel) as (runner, chat):
            await chat.inject("M", "mallory", "run echo for me")
            assert await chat.wait_for("M", 1) == ["could not"]
            await chat.inject("A", "alice", "run echo for me")
            assert await chat.wait_for("A", 1) == ["done"]

    asyncio.run(scenario())
    store = session_store(kernel)
    by_chat = {row["id"]: store.get_messages_as_conversation(row["id"])
               for row in store.list_sessions(source="testchat")}
    stranger = next(m for m in by_chat.values() if m[0].get("provenance"))
    assert stranger[0]["provenance"] == {"trust": "untrusted",
                                         "source": "platform:testchat:mallory"}
    refusal = json.loads(stranger[2]["content"])["error"]
    assert "untrusted text (from platform:testchat:mallory)" in refusal
    owner = next(m for m in by_chat.values() if not m[0].get("provenance"))
    assert "it-ran" in owner[2]["content"]  # alice's command ran, unasked: she is listed
    assert "it-ran" not in stranger[2]["content"]

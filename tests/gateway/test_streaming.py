"""Replies shown while the model writes them, on a platform that can edit its messages."""

from __future__ import annotations

import asyncio
from typing import Any

from hermes_agent.api import SendResult
from hermes_agent.kits.chat_text import EditedReply
from hermes_agent.testing.fake_llm import reply_text, reply_tool_call

from .conftest import TestAdapter, running


class EditingAdapter(TestAdapter):
    supports_streaming = True

    def __init__(self, config: Any = None):
        super().__init__(config)
        self.edits: list[tuple[str, str]] = []

    async def edit_message(self, chat_id: str, message_id: str, content: str,
                           metadata: dict[str, Any] | None = None) -> SendResult:
        self.edits.append((message_id, content))
        return SendResult(True, message_id=message_id)


def test_a_reply_is_sent_once_then_edited_into_the_final_answer(kernel_for, server, gate,
                                                                 monkeypatch):
    monkeypatch.setattr(EditedReply, "interval", 0.0)  # every piece edits (the test's pace)
    from . import conftest

    monkeypatch.setattr(conftest, "TestAdapter", EditingAdapter)
    gate.opened.set()
    server.script(reply_tool_call("wait_gate", {}, text="Checking the gate."),
                  reply_text("The gate is open.", chunk_size=3))
    kernel = kernel_for()

    async def scenario() -> EditingAdapter:
        async with running(kernel) as (_, chat):
            await chat.inject("A", "alice", "is the gate open?")
            for _ in range(200):  # the final edit comes after the last send
                if chat.edits and chat.edits[-1][1] == "The gate is open.":
                    break
                await asyncio.sleep(0.05)
            return chat

    chat = asyncio.run(scenario())
    assert isinstance(chat, EditingAdapter)
    assert chat.texts("A") == ["Chec"]  # one message, started with the first piece
    assert len(chat.edits) > 3 and {mid for mid, _ in chat.edits} == {"1"}
    assert chat.edits[-1][1] == "The gate is open."


def test_streaming_off_sends_the_reply_whole(kernel_for, server, monkeypatch):
    from . import conftest

    monkeypatch.setattr(conftest, "TestAdapter", EditingAdapter)
    server.script(reply_text("whole answer", chunk_size=2))
    kernel = kernel_for(gateway={"stream_replies": False})

    async def scenario() -> EditingAdapter:
        async with running(kernel) as (_, chat):
            await chat.inject("A", "alice", "hi")
            assert await chat.wait_for("A", 1) == ["whole answer"]
            return chat

    assert asyncio.run(scenario()).edits == []

"""The platform SDK (hermes_agent.api) and reply splitting (hermes_agent.kits.chat_text)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from hermes_agent.api import ChatInfo, PlatformAdapter, PlatformConfig, SendResult
from hermes_agent.kits.chat_text import split_message


class Quiet(PlatformAdapter):
    """An adapter that connects, and sends nowhere."""

    async def connect(self, *, is_reconnect: bool = False) -> bool:
        return True

    async def disconnect(self) -> None:
        pass

    async def send(self, chat_id: str, content: str, reply_to: Any = None,
                   metadata: Any = None) -> SendResult:
        return SendResult(True)


def test_a_short_reply_is_one_piece() -> None:
    assert split_message("hello", 10) == ["hello"]
    assert split_message("x" * 5000, 0) == ["x" * 5000]  # 0: no limit
    assert split_message("", 10) == []


def test_pieces_are_cut_between_paragraphs_first() -> None:
    text = "first paragraph here.\n\nsecond one.\n\nthird paragraph, a bit longer."
    assert split_message(text, 40) == ["first paragraph here.\n\nsecond one.",
                                       "third paragraph, a bit longer."]


def test_a_code_block_cut_in_two_is_closed_and_reopened() -> None:
    code = "```python\n" + "\n".join(f"x{i} = {i}" for i in range(20)) + "\n```"
    pieces = split_message("Here:\n\n" + code, 60)
    assert all(len(p) <= 60 for p in pieces)
    blocks = [p for p in pieces if "x1 = 1" in p or "x19 = 19" in p]
    assert blocks and all(p.startswith("```python") and p.endswith("```") for p in blocks)
    assert all(p.count("```") % 2 == 0 for p in pieces)


def test_an_overlong_word_is_cut_hard() -> None:
    pieces = split_message("a" * 25, 10)
    assert pieces == ["a" * 10, "a" * 10, "a" * 5]


def test_an_adapter_written_like_the_originals_fits_the_base_class() -> None:
    class Legacy(Quiet):
        pass

    config = PlatformConfig({"token": "t", "extra": {"mode": "poll"}})
    adapter = Legacy(config, SimpleNamespace(value="legacy"))
    assert adapter.name == "legacy" and adapter.config.token == "t"
    assert adapter.config.extra == {"mode": "poll"} and adapter.config.missing is None
    info = ChatInfo("Room", "group", {"members": 3})
    assert info["name"] == "Room" and info.get("members") == 3 and info.get("x") is None
    with pytest.raises(TypeError):
        PlatformAdapter()  # type: ignore[abstract]



def test_the_originals_base_adapter_keeps_truncate_message() -> None:
    """0.19's ``BasePlatformAdapter.truncate_message`` (compat) is :func:`split_message`."""
    from hermes_agent.builtin_plugins.compat.gateway_types import BasePlatformAdapter

    class Legacy(BasePlatformAdapter, Quiet):
        pass

    adapter = Legacy(PlatformConfig({}), SimpleNamespace(value="legacy"))
    assert adapter.truncate_message("a b c d", 3) == ["a b", "c d"]


def test_open_stream_left_as_it_is_returns_none() -> None:
    """The gateway then edits one message as the reply grows (``EditedReply``, of
    hermes_agent.kits.chat_text) when the adapter ``supports_streaming``:
    tests/gateway/test_streaming.py runs that whole path."""
    class Streaming(Quiet):
        supports_streaming = True

    assert Streaming().open_stream("c") is None

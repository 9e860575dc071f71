"""The compressor's cuts: never between a tool call and its results, the latest user message
always kept, old tool output outside the tail cleared; checked on fixed cases and on
generated conversations."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_agent.builtin_plugins.context.boundaries import (
    PRUNE_OVER_CHARS,
    find_cut,
    prune_tool_outputs,
)


def user(text: str = "question") -> dict[str, Any]:
    return {"role": "user", "content": text}


def answer(text: str = "answer") -> dict[str, Any]:
    return {"role": "assistant", "content": text}


def calls(*ids: str) -> dict[str, Any]:
    return {"role": "assistant", "content": "", "tool_calls": [
        {"id": i, "type": "function", "function": {"name": "read_file", "arguments": "{}"}}
        for i in ids]}


def result(call_id: str, text: str = "contents") -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": text}


def test_the_head_is_extended_over_the_results_of_its_last_call() -> None:
    messages = [user(), calls("a", "b"), result("a"), result("b"), answer(), user(), answer(),
                user(), answer()]
    cut = find_cut(messages, protect_first_n=3, protect_last_n=2, tail_budget_tokens=10_000)
    assert cut.head == 4  # both results stay with their call
    assert cut.tail == 7


def test_the_tail_starts_at_the_call_not_among_its_results() -> None:
    messages = [user(), answer(), user(), answer(), user(), calls("a", "b"), result("a"),
                result("b"), answer()]
    cut = find_cut(messages, protect_first_n=2, protect_last_n=2, tail_budget_tokens=10_000)
    assert cut.tail <= 4  # the latest user message, and so the whole tool group, is kept
    cut = find_cut([*messages, user("next"), calls("c"), result("c"), result("c2")],
                   protect_first_n=2, protect_last_n=2, tail_budget_tokens=10_000)
    assert cut.tail == 9


def test_the_tail_shrinks_to_its_token_budget_but_keeps_the_latest_user_message() -> None:
    big = "x" * 4000  # ~1,000 tokens each
    messages = [user(), answer(), user(big), answer(big), user(big), answer(big), user("now"),
                answer(big), answer(big)]
    cut = find_cut(messages, protect_first_n=2, protect_last_n=20, tail_budget_tokens=1500)
    assert cut.tail == 6  # the latest user message, even though its answers pass the budget
    cut = find_cut(messages[:6], protect_first_n=2, protect_last_n=20, tail_budget_tokens=1500)
    assert cut.tail == 4 and messages[4]["role"] == "user"


def test_nothing_to_cut_when_head_and_tail_meet() -> None:
    messages = [user(), answer(), user(), answer()]
    assert find_cut(messages, protect_first_n=3, protect_last_n=20,
                    tail_budget_tokens=10_000).empty
    assert find_cut([], protect_first_n=3, protect_last_n=20, tail_budget_tokens=10).empty


def test_pruning_clears_long_tool_output_only() -> None:
    long_output, short_output = "y" * (PRUNE_OVER_CHARS + 1), "y" * PRUNE_OVER_CHARS
    messages = [calls("a", "b"), result("a", long_output), result("b", short_output),
                answer(long_output)]
    pruned = prune_tool_outputs(messages)
    assert pruned[1]["content"].startswith("[Earlier tool output (201 characters) removed")
    assert pruned[1]["tool_call_id"] == "a"
    assert pruned[2] == messages[2] and pruned[3] == messages[3] and pruned[0] == messages[0]
    assert messages[1]["content"] == long_output  # the input is not changed


@st.composite
def conversations(draw: Any) -> list[dict[str, Any]]:
    """Well-formed histories: user turns, each answered by tool groups and a final answer."""
    messages: list[dict[str, Any]] = []
    for turn in range(draw(st.integers(0, 12))):
        messages.append(user("u" * draw(st.integers(1, 3000))))
        for group in range(draw(st.integers(0, 3))):
            ids = [f"{turn}-{group}-{n}" for n in range(draw(st.integers(1, 3)))]
            messages.append(calls(*ids))
            messages.extend(result(i, "r" * draw(st.integers(0, 3000))) for i in ids)
        if draw(st.booleans()):
            messages.append(answer("a" * draw(st.integers(0, 2000))))
    return messages


@settings(max_examples=300, deadline=None)
@given(conversations(), st.integers(0, 6), st.integers(1, 25), st.integers(1, 5000))
def test_generated_cuts_never_split_a_tool_group(messages: list[dict[str, Any]], first: int,
                                                 last: int, budget: int) -> None:
    cut = find_cut(messages, protect_first_n=first, protect_last_n=last,
                   tail_budget_tokens=budget)
    assert 0 <= cut.head <= cut.tail <= len(messages)
    for index in (cut.head, cut.tail):
        assert index == len(messages) or messages[index]["role"] != "tool"
    users = [i for i, m in enumerate(messages) if m["role"] == "user"]
    if users and cut.head <= users[-1]:
        assert cut.tail <= users[-1]  # the latest user message is never summarised
    assert cut.head >= min(first, len(messages))
    kept = [*messages[:cut.head], *messages[cut.tail:]]
    pending: set[str] = set()
    for message in kept:  # every kept result follows its call, every kept call has its results
        if message["role"] == "tool":
            assert message["tool_call_id"] in pending
            pending.discard(message["tool_call_id"])
        else:
            assert not pending
            pending = {c["id"] for c in message.get("tool_calls") or ()}
    assert not pending

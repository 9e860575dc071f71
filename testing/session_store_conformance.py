"""The conformance suite every session-store backend passes (``hermes_agent.api.SessionStore``).

A backend runs it from one test module::

    import pytest
    from hermes_agent.testing.session_store_conformance import *  # noqa: F401,F403

    @pytest.fixture
    def session_store_factory(tmp_path):
        stores = []

        def make(name: str = "main"):
            store = MyStore(tmp_path / f"{name}.db")  # same name: same database
            stores.append(store)
            return store
        yield make
        for store in stores:
            store.close()

``make(name)`` opens a store; every call with the same name reaches the same (initially
empty) database, so two calls are two handles (two writers), and another name is another,
empty database (the target of an export/import round trip). Only the public API is used:
sessions, messages, titles, lineage, the rich listing, usage and cost, export/import
(``import_records``), prune and delete, search (the shared query language, CJK text and
hostile queries: :mod:`.session_store_search_conformance`) and two concurrent writers.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from ..api import InvalidArgumentError, SessionStore, SessionStoreError, TitleConflictError
from .session_store_search_conformance import *  # noqa: F401,F403
from .session_store_search_conformance import __all__ as _SEARCH_TESTS

Factory = Callable[..., Any]
CALLS = [{"id": "call_1", "type": "function",
          "function": {"name": "web_search", "arguments": "{\"query\": \"GRPO papers\"}"}}]


@pytest.fixture
def conformance_store(session_store_factory: Factory) -> Any:
    return session_store_factory()


def _ids(results: list[dict[str, Any]]) -> list[Any]:
    return [r["id"] for r in results]


# --- sessions and messages -----------------------------------------------------------------

def test_conformance_protocol_and_lifecycle(conformance_store: Any) -> None:
    store = conformance_store
    assert isinstance(store, SessionStore) and isinstance(store.name, str)
    sid = store.create_session(source="telegram", model="m", user_id="u1",
                               model_config={"temperature": 0.2}, system_prompt="You are")
    row = store.get_session(sid)
    assert (row["source"], row["user_id"], json.loads(row["model_config"])) == (
        "telegram", "u1", {"temperature": 0.2})
    assert (row["message_count"], row["input_tokens"], row["ended_at"]) == (0, 0, None)
    store.end_session(sid, "max_iterations")
    row = store.get_session(sid)
    assert row["end_reason"] == "max_iterations" and row["ended_at"] >= row["started_at"]
    store.reopen_session(sid)
    assert store.get_session(sid)["ended_at"] is None
    store.update_system_prompt(sid, "new prompt")
    store.update_session_model(sid, "m2")
    assert (store.get_session(sid)["system_prompt"], store.get_session(sid)["model"]) == (
        "new prompt", "m2")
    assert store.get_session("missing") is None and store.get_messages("missing") == []
    with pytest.raises(SessionStoreError, match="already exists"):
        store.create_session(sid, source="cli")
    with pytest.raises(SessionStoreError, match="no session"):
        store.end_session("missing")
    with pytest.raises(SessionStoreError, match="no parent session"):
        store.create_session(source="cli", parent_session_id="missing")


def test_conformance_append_every_column_and_read_back(conformance_store: Any) -> None:
    store = conformance_store
    sid = store.create_session(source="cli")
    store.append_message(sid, "user", "hi", token_count=3, timestamp=100.0)
    mid = store.append_message(
        sid, "assistant", None, tool_calls=CALLS, token_count=9, finish_reason="tool_calls",
        reasoning="think", reasoning_content="rc", reasoning_details=[{"type": "summary"}],
        codex_reasoning_items=[{"id": "r1"}], codex_message_items=[{"id": "m1"}], timestamp=101)
    store.append_message(sid, "tool", '{"ok": true}', tool_name="web_search",
                         tool_call_id="call_1", timestamp=102)
    store.append_message(sid, "user", [{"type": "text", "text": "look"},
                                       {"type": "image_url", "image_url": {"url": "x"}}])
    msgs = store.get_messages(sid)
    assert [m["role"] for m in msgs] == ["user", "assistant", "tool", "user"]
    assert msgs[0]["timestamp"] == 100.0 and msgs[0]["token_count"] == 3
    assistant = msgs[1]
    assert assistant["id"] == mid and assistant["tool_calls"] == CALLS
    assert (assistant["reasoning"], assistant["reasoning_content"], assistant["finish_reason"],
            assistant["token_count"]) == ("think", "rc", "tool_calls", 9)
    assert assistant["reasoning_details"] == [{"type": "summary"}]
    assert assistant["codex_reasoning_items"] == [{"id": "r1"}]
    assert assistant["codex_message_items"] == [{"id": "m1"}]
    assert msgs[3]["content"][1]["type"] == "image_url"
    assert (store.get_session(sid)["message_count"],
            store.get_session(sid)["tool_call_count"]) == (4, 1)
    assert store.get_messages(sid, limit=2, offset=1)[0]["id"] == mid
    assert len(store.get_messages(sid, limit=2)) == 2
    with pytest.raises(SessionStoreError, match="create it with create_session"):
        store.append_message("nope", "user", "x")


def test_conformance_provenance_is_kept_replayed_and_rewritten(conformance_store: Any) -> None:
    store = conformance_store
    sid = store.create_session(source="cli")
    web = {"trust": "untrusted", "source": "web:example.com"}
    store.append_message(sid, "user", "read the page")
    store.append_message(sid, "assistant", None, tool_calls=CALLS)
    store.append_message(sid, "tool", "page text", tool_name="web_extract",
                         tool_call_id="call_1", provenance=web)
    assert [m["provenance"] for m in store.get_messages(sid)] == [None, None, web]
    replay = store.get_messages_as_conversation(sid)
    assert "provenance" not in replay[0] and replay[2]["provenance"] == web
    store.replace_messages(sid, replay)
    assert store.get_messages_as_conversation(sid)[2]["provenance"] == web


def test_conformance_conversation_replay_and_rewrite(conformance_store: Any) -> None:
    store = conformance_store
    sid = store.create_session(source="cli")
    store.append_message(sid, "user", "q zebra")
    store.append_message(sid, "assistant", None, tool_calls=CALLS, reasoning="secret")
    store.append_message(sid, "tool", "result", tool_name="web_search", tool_call_id="call_1")
    store.append_message(sid, "assistant", "answer", reasoning="more", finish_reason="stop")
    assert store.get_messages_as_conversation(sid) == [
        {"role": "user", "content": "q zebra"},
        {"role": "assistant", "content": None, "tool_calls": CALLS},
        {"role": "tool", "content": "result", "tool_call_id": "call_1", "tool_name": "web_search"},
        {"role": "assistant", "content": "answer"}]
    store.replace_messages(sid, [{"role": "user", "content": "only one giraffe"},
                                 {"role": "assistant", "content": None, "tool_calls": CALLS}])
    assert [m["content"] for m in store.get_messages(sid)] == ["only one giraffe", None]
    row = store.get_session(sid)
    assert (row["message_count"], row["tool_call_count"]) == (2, 1)
    assert store.search_messages("zebra") == [] and len(store.search_messages("giraffe")) == 1
    assert store.clear_messages(sid) == 2 and store.get_messages(sid) == []
    assert store.get_session(sid)["message_count"] == 0


def test_conformance_undecodable_text_is_repaired(conformance_store: Any) -> None:
    store = conformance_store
    sid = store.create_session(source="cli\udcff", title="caf\udcc3\udca9 \ud800")
    assert store.get_session(sid)["title"] == "café \ufffd"
    assert store.get_session(sid)["source"] == "cli\ufffd"
    store.append_message(sid, "user", "na\udcc3\udcafve \ud83d\ude00 bytes \udcff")
    store.append_message(sid, "user", [{"type": "text", "text": "part \udcfe"}])
    assert [m["content"] for m in store.get_messages(sid)] == [
        "naïve 😀 bytes \ufffd", [{"type": "text", "text": "part \ufffd"}]]
    assert _ids(store.search_messages("na\udcc3\udcafve")) != []
    assert store.search_messages("\udcff\ud800") == []
    assert store.list_sessions(source="cli\udcff")[0]["id"] == sid


def test_conformance_arguments_are_checked(conformance_store: Any) -> None:
    store = conformance_store
    sid = store.create_session(source="cli")
    for call in (lambda: store.search_messages("x", limit=10**20),
                 lambda: store.search_messages("x", offset=-1),
                 lambda: store.list_sessions(limit=10**20),
                 lambda: store.get_messages(sid, limit=-5),
                 lambda: store.list_sessions_rich(limit=True),
                 lambda: store.update_token_counts(sid, input_tokens=10**20)):
        with pytest.raises(InvalidArgumentError, match=r"from 0 to \d+|64-bit"):
            call()
    for bad in (5, [b"cli"], ["cli", None]):
        with pytest.raises(InvalidArgumentError, match="source_filter must"):
            store.search_messages("deploy", source_filter=bad)


# --- titles and lineage ----------------------------------------------------------------------

def test_conformance_unique_titles_and_numbering(conformance_store: Any) -> None:
    store = conformance_store
    a = store.create_session(source="cli", started_at=time.time() - 100)
    b = store.create_session(source="cli")
    assert store.set_session_title(a, "  Fix\n Docker   Build ") == "Fix Docker Build"
    with pytest.raises(TitleConflictError, match="already used"):
        store.set_session_title(b, "Fix Docker Build")
    with pytest.raises(TitleConflictError):
        store.create_session(source="cli", title="Fix Docker Build")
    assert store.get_next_title_in_lineage("Fix Docker Build") == "Fix Docker Build #2"
    store.set_session_title(b, "Fix Docker Build #2")
    assert store.get_next_title_in_lineage("Fix Docker Build") == "Fix Docker Build #3"
    assert store.get_next_title_in_lineage("Fix Docker Build #2") == "Fix Docker Build #3"
    assert store.resolve_session_by_title("Fix Docker Build") == b  # newest in the lineage
    assert store.resolve_session_by_title("nothing") is None
    assert store.resolve_session_id(a[:-3]) == a and store.resolve_session_id(b) == b
    assert store.resolve_session_id("Fix Docker Build") == b
    assert store.set_title_if_untitled(b, "Other") is None  # b keeps its title
    c = store.create_session(source="cli")
    assert store.set_title_if_untitled(c, " Other ") == "Other"
    store.set_session_title(a, "")
    assert store.get_session(a)["title"] is None
    assert len(store.set_session_title(b, "x" * 300)) == 100


def test_conformance_lineage_compression_vs_delegation(conformance_store: Any) -> None:
    store = conformance_store
    root = store.create_session(source="cli", title="Long task")
    sub = store.create_session(source="subagent", parent_session_id=root)  # while running
    store.end_session(root, "compression")
    cont = store.create_session(source="cli", parent_session_id=root,
                                title=store.get_next_title_in_lineage("Long task"))
    store.end_session(cont, "compression")
    tip = store.create_session(source="cli", parent_session_id=cont)
    assert store.get_compression_tip(root) == tip and store.get_compression_tip(tip) == tip
    assert [s["id"] for s in store.get_ancestors(tip)] == [cont, root]
    rel = {d["id"]: d["relation"] for d in store.get_descendants(root)}
    assert rel == {sub: "delegation", cont: "compression", tip: "compression"}
    assert store.resolve_session_by_title("Long task") == cont


def test_conformance_rich_listing_projects_chains_onto_tips(conformance_store: Any) -> None:
    store = conformance_store
    root = store.create_session(source="cli", started_at=time.time() - 50)
    store.append_message(root, "user", "  first   question about\nrust lifetimes ")
    store.end_session(root, "compression")
    tip = store.create_session(source="cli", parent_session_id=root)
    store.append_message(tip, "assistant", "later", timestamp=time.time() + 5)
    other = store.create_session(source="telegram", started_at=time.time() - 10)
    child = store.create_session(source="subagent", parent_session_id=other)
    rows = store.list_sessions_rich()
    assert [r["id"] for r in rows] == [other, tip]  # newest chain start first
    assert rows[1]["preview"] == "first question about rust lifetimes"
    assert rows[1]["lineage"] == [root, tip] and rows[1]["last_active"] > time.time()
    assert len(store.list_sessions_rich(include_children=True)) == 3
    assert len(store.list_sessions_rich(project_compression_tips=False)) == 3
    assert [r["id"] for r in store.list_sessions_rich(source="telegram")] == [other]
    assert [r["id"] for r in store.list_sessions_rich(exclude_sources=["cli"])] == [other]
    assert [r["id"] for r in store.list_sessions_rich(exclude_sources="cli")] == [other]
    assert [r["id"] for r in store.list_sessions(limit=1)] == [child]
    assert [r["id"] for r in store.list_sessions(source="cli", limit=5, offset=1)] == [root]


# --- accounting, export, clean-up ----------------------------------------------------------

def test_conformance_usage_and_cost_accounting(conformance_store: Any) -> None:
    store = conformance_store
    sid = store.create_session(source="cli", model="claude")
    for _ in range(2):
        store.update_token_counts(sid, input_tokens=100, output_tokens=20, cache_read_tokens=50,
                                  cache_write_tokens=5, reasoning_tokens=7, api_call_count=1,
                                  estimated_cost_usd=0.01, billing_provider="anthropic",
                                  cost_status="estimated")
    row = store.get_session(sid)
    assert (row["input_tokens"], row["output_tokens"], row["cache_read_tokens"],
            row["cache_write_tokens"], row["reasoning_tokens"], row["api_call_count"]) == (
        200, 40, 100, 10, 14, 2)
    assert row["estimated_cost_usd"] == pytest.approx(0.02)
    assert (row["billing_provider"], row["cost_status"]) == ("anthropic", "estimated")
    store.update_token_counts(sid, input_tokens=5, estimated_cost_usd=0.3, actual_cost_usd=1.5,
                              absolute=True)
    row = store.get_session(sid)
    assert (row["input_tokens"], row["output_tokens"], row["actual_cost_usd"]) == (5, 0, 1.5)
    assert row["estimated_cost_usd"] == pytest.approx(0.3)
    other = store.create_session(source="telegram", model="gpt")
    store.update_token_counts(other, input_tokens=1000, estimated_cost_usd=0.5)
    store.append_message(other, "user", "x")
    unpriced = store.create_session(source="telegram", model="local")
    store.update_token_counts(unpriced, input_tokens=10, api_call_count=1)
    stats = store.usage_stats()
    assert stats["total"]["sessions"] == 3 and stats["total"]["messages"] == 1
    assert stats["total"]["unpriced_sessions"] == 1
    assert stats["total"]["estimated_cost_usd"] == pytest.approx(0.8)  # the known costs
    assert stats["by_model"][0]["model"] == "gpt"
    assert {r["source"] for r in stats["by_source"]} == {"cli", "telegram"}
    assert stats["top_sessions"][0]["id"] == other
    cli = store.usage_stats(source="cli")["total"]
    assert (cli["sessions"], cli["unpriced_sessions"], cli["input_tokens"]) == (1, 0, 5)


def test_conformance_export_prune_delete(conformance_store: Any) -> None:
    store = conformance_store
    old = store.create_session(source="telegram", started_at=time.time() - 200 * 86400)
    store.append_message(old, "user", "ancient history")
    store.end_session(old)
    live = store.create_session(source="telegram", started_at=time.time() - 199 * 86400)
    cli = store.create_session(source="cli", started_at=time.time() - 198 * 86400)
    store.end_session(cli)
    child = store.create_session(source="cli", parent_session_id=old)
    assert store.export_session(old)["messages"][0]["content"] == "ancient history"
    assert store.export_session("missing") is None
    assert [e["id"] for e in store.export_all(source="telegram")] == [old, live]
    assert store.prune_sessions(older_than_days=90, source="telegram") == 1
    assert store.get_session(old) is None and store.get_session(live) is not None
    assert store.get_session(child)["parent_session_id"] is None
    assert store.search_messages("ancient") == []
    assert store.prune_sessions(older_than_days=90) == 1  # the ended cli one; live stays
    assert store.delete_session(live) is True and store.delete_session(live) is False


def _comparable(record: dict[str, Any]) -> dict[str, Any]:
    out = dict(record)
    out["messages"] = [{k: v for k, v in m.items() if k not in ("id", "session_id")}
                       for m in record["messages"]]
    return out


def test_conformance_export_import_round_trip(session_store_factory: Factory) -> None:
    source = session_store_factory("main")
    root = source.create_session("r1", source="cli", model="m", title="Plan",
                                 model_config={"t": 1}, started_at=1000.0)
    source.append_message(root, "user", "hello 数据", timestamp=1001.0)
    source.append_message(root, "assistant", None, tool_calls=CALLS, reasoning="r",
                          reasoning_details=[{"a": 1}], timestamp=1002.0)
    source.append_message(root, "user", [{"type": "text", "text": "parts"}], timestamp=1003.0)
    source.update_token_counts(root, input_tokens=7, estimated_cost_usd=0.25)
    source.end_session(root, "compression")
    source.create_session("r2", source="cli", parent_session_id=root, title="Plan #2")
    exported = list(source.export_all())
    target = session_store_factory("copy")
    target.create_session("other", source="cli", title="Plan")  # a title that is taken
    stats = target.import_records(exported)
    assert stats == {"sessions": 2, "messages": 3, "skipped": 0}
    assert target.import_records(exported)["skipped"] == 2  # never overwrites
    copied = {r["id"]: r for r in target.export_all()}
    # "Plan" was taken: r1 (imported first, the older) is "Plan #2", so r2 is "Plan #3"
    assert (copied["r1"]["title"], copied["r2"]["title"]) == ("Plan #2", "Plan #3")
    for record in exported:
        mine = _comparable(copied[record["id"]])
        mine["title"] = record["title"]
        assert mine == _comparable(record)
    assert _ids(target.search_messages("数据")) == [copied["r1"]["messages"][0]["id"]]
    assert target.get_compression_tip("r1") == "r2"
    # keeping message ids (keep_message_ids): the very same export
    same = session_store_factory("same")
    assert same.import_records(exported, keep_message_ids=True)["messages"] == 3
    assert list(same.export_all()) == exported
    later = same.append_message("r2", "user", "numbered after the kept ids")
    assert later > max(m["id"] for m in exported[0]["messages"])
    with pytest.raises(SessionStoreError, match="without keep_message_ids to number them anew"):
        session = dict(exported[0], id="r3", title=None)
        same.import_records([session], keep_message_ids=True)
    assert same.get_session("r3") is None  # that session was not half written


# --- concurrency and durability ------------------------------------------------------------

def test_conformance_two_writers(session_store_factory: Factory) -> None:
    """Two handles on one database, each in its own thread, append to their own session and
    to a shared one: nothing lost, counters exact, ids unique and increasing per writer."""
    first, second = session_store_factory(), session_store_factory()
    first.create_session("shared", source="cli")
    errors: list[BaseException] = []
    ids: dict[str, list[int]] = {"a": [], "b": []}
    count = 150

    def write(store: Any, name: str) -> None:
        try:
            store.create_session(name, source="cli")
            for i in range(count):
                ids[name].append(store.append_message(name, "user", f"{name} message {i}"))
                ids[name].append(store.append_message("shared", "user", f"{name} shared {i}",
                                                      tool_calls=CALLS if i % 5 == 0 else None))
        except BaseException as exc:  # reported below
            errors.append(exc)
    threads = [threading.Thread(target=write, args=(s, n)) for s, n in ((first, "a"),
                                                                     (second, "b"))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert errors == [] and not any(t.is_alive() for t in threads)
    assert len(set(ids["a"]) | set(ids["b"])) == 4 * count
    assert all(x < y for x, y in zip(ids["a"], ids["a"][1:]))
    reader = session_store_factory()
    for name in ("a", "b"):
        texts = [m["content"] for m in reader.get_messages(name)]
        assert texts == [f"{name} message {i}" for i in range(count)]
    shared = reader.get_session("shared")
    assert (shared["message_count"], shared["tool_call_count"]) == (2 * count, 2 * (count // 5))
    assert len(reader.search_messages('"b shared 149"')) == 1


def test_conformance_data_outlives_the_handle(session_store_factory: Factory) -> None:
    store = session_store_factory()
    sid = store.create_session(source="cli", title="Kept")
    store.append_message(sid, "user", "durable words")
    store.close()
    again = session_store_factory()
    assert again.resolve_session_by_title("Kept") == sid
    assert [m["content"] for m in again.get_messages(sid)] == ["durable words"]
    assert len(again.search_messages("durable")) == 1


__all__ = ["conformance_store", *_SEARCH_TESTS] + sorted(
    name for name in dir() if name.startswith("test_") and name not in _SEARCH_TESTS)

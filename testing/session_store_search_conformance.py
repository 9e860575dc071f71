"""The search part of the session-store conformance suite (see
:mod:`hermes_agent.testing.session_store_conformance`, which includes it): the shared query
language, punctuated terms, tool calls, filters, result shape, paging, CJK text, and hostile
queries that must never raise."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

Factory = Callable[..., Any]


@pytest.fixture
def conformance_corpus(session_store_factory: Factory) -> Any:
    store = session_store_factory()
    cli = store.create_session("cli1", source="cli", model="claude")
    store.append_message(cli, "user", "How do I deploy the docker container to kubernetes?")
    store.append_message(cli, "assistant", "Use kubectl apply. " + "x" * 300)
    store.append_message(cli, "user", "The chat-send step fails reading config.yaml")
    store.append_message(cli, "assistant", None, tool_calls=[
        {"id": "c1", "type": "function",
         "function": {"name": "web_search", "arguments": "{\"query\": \"grpo papers\"}"}}])
    store.append_message(cli, "tool", "no results", tool_name="web_search", tool_call_id="c1")
    tg = store.create_session("tg1", source="telegram", model="gpt")
    store.append_message(tg, "user", "python is great but java is verbose")
    store.append_message(tg, "user", "python only here")
    store.append_message(tg, "assistant", "数据库迁移已经完成，请检查日志")
    store.append_message(tg, "user", "今天天气很好")
    store.append_message(tg, "user", "deployment deployed deploys")
    return store


def _ids(results: list[dict[str, Any]]) -> list[Any]:
    return [r["id"] for r in results]


# --- search -----------------------------------------------------------------------------------

def test_conformance_search_words_phrases_or_not_prefix(conformance_corpus: Any) -> None:
    store = conformance_corpus
    assert len(store.search_messages("docker kubernetes")) == 1
    assert len(store.search_messages("DOCKER")) == 1
    assert len(store.search_messages("docker java")) == 0
    assert len(store.search_messages('"deploy the docker"')) == 1
    assert len(store.search_messages('"docker the deploy"')) == 0
    assert len(store.search_messages("docker OR java")) == 2
    assert [r["snippet"] for r in store.search_messages("python NOT java")] == [
        ">>>python<<< only here"]
    assert len(store.search_messages("deploy*")) == 2  # deploy, deployment, deployed, deploys
    assert store.search_messages("deplo") == []  # words, not substrings


def test_conformance_search_tool_calls_and_punctuated_terms(conformance_corpus: Any) -> None:
    store = conformance_corpus
    assert {h["role"] for h in store.search_messages("web_search")} == {"assistant", "tool"}
    assert store.search_messages("grpo")[0]["role"] == "assistant"  # tool-call arguments
    assert ">>>chat-send<<<" in store.search_messages("chat-send")[0]["snippet"]
    assert len(store.search_messages("config.yaml")) == 1


def test_conformance_search_filters_shape_and_context(conformance_corpus: Any) -> None:
    store = conformance_corpus
    assert {h["source"] for h in store.search_messages("python")} == {"telegram"}
    assert store.search_messages("python", source_filter=["cli"]) == []
    assert store.search_messages("python", source_filter="telegram") != []
    assert store.search_messages("python", exclude_sources=["telegram"]) == []
    assert store.search_messages("python", exclude_sessions=["tg1"]) == []
    assert store.search_messages("docker", role_filter=["assistant"]) == []
    assert len(store.search_messages("docker", role_filter=["user"])) == 1
    [hit] = store.search_messages("kubectl")
    assert hit["session_id"] == "cli1" and hit["source"] == "cli" and hit["model"] == "claude"
    assert hit["session_started"] > 0 and hit["role"] == "assistant" and hit["timestamp"] > 0
    assert ">>>kubectl<<<" in hit["snippet"]
    before, after = hit["context"]
    assert before["content"].startswith("How do I deploy") and before["role"] == "user"
    assert after["content"].startswith("The chat-send step")
    assert len(store.search_messages("container")[0]["context"]) == 1  # first message
    assert len(store.search_messages("docker")[0]["context"][0]["content"]) == 200


def test_conformance_search_sort_and_paging(conformance_corpus: Any) -> None:
    store = conformance_corpus
    newest = _ids(store.search_messages("python", sort="newest"))
    assert len(newest) == 2 and newest == sorted(newest, reverse=True)
    assert _ids(store.search_messages("python", sort="oldest")) == newest[::-1]
    assert _ids(store.search_messages("python", sort="newest", limit=1, offset=1)) == newest[1:]
    assert store.search_messages("python", limit=0) == []


def test_conformance_search_cjk(conformance_corpus: Any) -> None:
    store = conformance_corpus
    [hit] = store.search_messages("数据库迁移")
    assert ">>>数据库迁移<<<" in hit["snippet"] and hit["source"] == "telegram"
    assert len(store.search_messages("迁移")) == 1
    assert len(store.search_messages("天")) == 1
    assert store.search_messages("迁移 天气") == []  # both must match
    assert len(store.search_messages("迁移 OR 天气")) == 2
    assert store.search_messages("数据库 NOT 日志") == []
    assert len(store.search_messages("迁移 OR python")) == 3
    assert store.search_messages("数据库迁移", role_filter=["user"]) == []


HOSTILE_QUERIES = [
    "", " ", '"', '""', "***", "a*", "*a", "NOT", "OR", "AND", "NOT NOT", "OR OR docker",
    "docker AND", "(docker", "docker)", "NEAR(docker kubectl)", "docker:", "col:docker",
    "^docker", "docker^2", "{docker}", "[docker]", "'", "''", "\\", "%", "_", "%_%",
    "\x00", "docker\x00kubectl", "\udcff", "数据 NOT", "NOT 数据", '"数据', "迁移日志*",
    "-docker", "docker -java", "+docker", "docker~", "a:b:c", "x" * 5000,
    " OR ".join(["ab*"] * 200), " ".join(f"w{i}*" for i in range(300)),
    "SELECT * FROM sessions; --", "'); DROP TABLE messages; --", "$$", "E'\\x00'",
    "\u200b\u200b", "\U0001f600", "ÀÉÎ", "ﬁ", "İstanbul", "a\nb\tc", "docker\r\n",
]


@pytest.mark.parametrize("query", HOSTILE_QUERIES)
def test_conformance_hostile_queries_never_raise(conformance_corpus: Any, query: str) -> None:
    for sort in (None, "newest", "oldest"):
        results = conformance_corpus.search_messages(query, limit=5, sort=sort)
        assert isinstance(results, list) and len(results) <= 5
        for hit in results:
            hit["snippet"].encode("utf-8")
    assert _ids(conformance_corpus.search_messages("docker")) != []  # the store still works


_WORDS = st.sampled_from(["OR", "NOT", "AND", '"', "*", "a*", "ab*", "数据", "迁移日志", "-",
                          "deploy", "chat-send", "(", ")", ":", "NEAR", "^", "''", "%", "_"])


@settings(max_examples=60, derandomize=True, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parts=st.lists(st.one_of(_WORDS, st.text(max_size=12)), max_size=10))
def test_conformance_fuzzed_queries_never_raise(conformance_corpus: Any, parts: list[str]) -> None:
    results = conformance_corpus.search_messages(" ".join(parts), limit=5)
    assert isinstance(results, list) and len(results) <= 5


__all__ = ["conformance_corpus", "HOSTILE_QUERIES"] + sorted(
    name for name in dir() if name.startswith("test_"))

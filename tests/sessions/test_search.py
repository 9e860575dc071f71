"""search_messages: FTS5 syntax, sanitising, filters, snippets and context, CJK paths, fuzzing."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_agent.builtin_plugins.sessions.search import parse, sanitize_fts5_query
from hermes_agent.builtin_plugins.sessions.store import SqliteSessionStore

CALLS = [{"id": "c1", "type": "function",
          "function": {"name": "web_search", "arguments": "{\"query\": \"grpo papers\"}"}}]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    store = SqliteSessionStore(tmp_path_factory.mktemp("search") / "state.db")
    cli = store.create_session("cli1", source="cli", model="claude")
    store.append_message(cli, "user", "How do I deploy the docker container to kubernetes?")
    store.append_message(cli, "assistant", "Use kubectl apply. " + "x" * 300)
    store.append_message(cli, "user", "The chat-send step fails reading config.yaml")
    store.append_message(cli, "assistant", None, tool_calls=CALLS)
    store.append_message(cli, "tool", "no results", tool_name="web_search", tool_call_id="c1")
    tg = store.create_session("tg1", source="telegram", model="gpt")
    store.append_message(tg, "user", "python is great but java is verbose")
    store.append_message(tg, "user", "python only here")
    store.append_message(tg, "assistant", "数据库迁移已经完成，请检查日志")
    store.append_message(tg, "user", "今天天气很好")
    store.append_message(tg, "user", "deployment deployed deploys")
    yield store
    store.close()


def ids(results):
    return [r["id"] for r in results]


def test_words_phrases_or_not_prefix(corpus):
    assert len(corpus.search_messages("docker kubernetes")) == 1
    assert len(corpus.search_messages("docker java")) == 0
    assert len(corpus.search_messages('"deploy the docker"')) == 1
    assert len(corpus.search_messages('"docker the deploy"')) == 0
    assert len(corpus.search_messages("docker OR java")) == 2
    assert [r["snippet"] for r in corpus.search_messages("python NOT java")] == [
        ">>>python<<< only here"]
    assert len(corpus.search_messages("deploy*")) == 2  # deploy, deployment, deployed, deploys


def test_tool_names_and_arguments_are_indexed(corpus):
    hits = corpus.search_messages("web_search")
    assert {h["role"] for h in hits} == {"assistant", "tool"}
    assert corpus.search_messages("grpo")[0]["role"] == "assistant"


def test_hyphenated_and_dotted_terms(corpus):
    assert ">>>chat-send<<<" in corpus.search_messages("chat-send")[0]["snippet"]
    assert len(corpus.search_messages("config.yaml")) == 1


@pytest.mark.parametrize("raw,expected", [
    ("chat-send", '"chat-send"'),
    ("config.yaml", '"config.yaml"'),
    ("hello AND", "hello"),
    ("OR hello", "hello"),
    ('TODO: fix chat-send "exact phrase" AND', 'TODO AND fix AND "chat-send" AND "exact phrase"'),
    ('unmatched "quote here', "unmatched AND quote AND here"),
    ("deploy*", "deploy*"),
    ("(a OR b)", "a OR b"),
    ("NOT alone", "alone"),
    ("a NOT b", "a NOT b"),
    ("+++ *** ^^^", ""),
    ("", ""),
])
def test_sanitiser(raw, expected):
    assert sanitize_fts5_query(raw) == expected.replace("a OR b", "(a) OR (b)")


def test_filters_by_source_excluded_source_and_role(corpus):
    assert {h["source"] for h in corpus.search_messages("python")} == {"telegram"}
    assert corpus.search_messages("python", source_filter=["cli"]) == []
    assert corpus.search_messages("python", exclude_sources=["telegram"]) == []
    assert corpus.search_messages("docker", role_filter=["assistant"]) == []
    assert len(corpus.search_messages("docker", role_filter=["user"])) == 1


def test_result_shape_snippet_context(corpus):
    [hit] = corpus.search_messages("kubectl")
    assert hit["session_id"] == "cli1" and hit["source"] == "cli" and hit["model"] == "claude"
    assert hit["session_started"] > 0 and hit["role"] == "assistant"
    assert ">>>kubectl<<<" in hit["snippet"]
    before, after = hit["context"]
    assert before["content"].startswith("How do I deploy") and before["role"] == "user"
    assert after["content"].startswith("The chat-send step")
    [first] = corpus.search_messages("container")
    assert len(first["context"]) == 1  # nothing before the first message
    [long_ctx] = corpus.search_messages("docker")
    assert len(long_ctx["context"][0]["content"]) == 200  # cut to 200 characters


def test_sort_and_paging(corpus):
    newest = ids(corpus.search_messages("python", sort="newest"))
    assert newest == sorted(newest, reverse=True)
    assert ids(corpus.search_messages("python", sort="oldest")) == newest[::-1]
    assert ids(corpus.search_messages("python", sort="newest", limit=1, offset=1)) == newest[1:]


def test_cjk_trigram_and_like_paths(corpus):
    [hit] = corpus.search_messages("数据库迁移")  # >= 3 characters: trigram table
    assert ">>>数据库迁移<<<" in hit["snippet"] and hit["source"] == "telegram"
    assert len(corpus.search_messages("迁移")) == 1  # 2 characters: LIKE
    assert len(corpus.search_messages("天")) == 1  # 1 character
    assert corpus.search_messages("迁移 天气") == []  # both must match
    assert len(corpus.search_messages("迁移 OR 天气")) == 2
    assert len(corpus.search_messages("数据库 NOT 日志")) == 0
    assert len(corpus.search_messages("迁移 OR python")) == 3
    assert corpus.search_messages("数据库迁移", role_filter=["user"]) == []


def test_query_kinds_parse():
    assert parse("docker OR k8s").fts() == "(docker) OR (k8s)"
    assert parse("数据库 NOT 日志").cjk


QUERY_TEXT = st.text(alphabet=st.sampled_from(list('abc xyz"*()-.:^+{}[]ANDORNOT数据库天 \'\\%_!@#')
                                              ), max_size=40)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(query=st.one_of(QUERY_TEXT, st.text(max_size=60)))
def test_no_query_raises(corpus, query):
    results = corpus.search_messages(query, limit=5)
    assert isinstance(results, list)
    for hit in results:
        assert set(hit) >= {"id", "session_id", "snippet", "context", "source"}


def test_phrase_ranking_in_one_pass_gives_every_hit_a_snippet(store):
    sid = store.create_session(source="cli")
    short = [store.append_message(sid, "user", f"the blue whale {i}") for i in range(5)]
    for i in range(25):  # newer, longer: ranked lower, but first in the index walk
        store.append_message(sid, "user", f"blue whale {i} " + "filler words here " * 40)
    hits = store.search_messages('"blue whale"', limit=5)
    assert sorted(h["id"] for h in hits) == short
    assert all(">>>blue whale<<<" in h["snippet"] for h in hits)
    assert len(store.search_messages('"blue whale"', limit=5, offset=25)) == 5


def test_phrase_ranking_shortest_match_first_without_bm25(store):
    """Phrase queries rank the newest matches by length in tokens (FTS5's docsize, read as
    varints past one and two bytes), newest first among equals; every match keeps its
    phrase snippet, and messages with the words apart are not matches."""
    sid = store.create_session(source="cli")
    tg = store.create_session(source="telegram")
    sizes = {100: None, 20000: None, 5: None, 300: None, 130: None}
    for n in sizes:
        sizes[n] = store.append_message(sid, "user", "red panda " + "leaf " * (n - 2))
    twin = store.append_message(sid, "user", "red panda " + "leaf " * 3)  # as short as n=5
    store.append_message(sid, "user", "panda red " + "leaf " * 3)  # the words, not the phrase
    other = store.append_message(tg, "assistant", "a red panda sleeps")
    hits = store.search_messages('"red panda"', limit=10)
    assert [h["id"] for h in hits] == [other, twin, sizes[5], sizes[100], sizes[130],
                                       sizes[300], sizes[20000]]
    assert all(">>>red panda<<<" in h["snippet"] for h in hits)
    paged = store.search_messages('"red panda"', limit=3, offset=2)
    assert [h["id"] for h in paged] == [sizes[5], sizes[100], sizes[130]]
    assert all(">>>red panda<<<" in h["snippet"] for h in paged)
    # filters join the sessions and messages tables beside the docsize table
    assert [h["id"] for h in store.search_messages('"red panda"', source_filter=["cli"],
                                                   role_filter=["user"], limit=3)] == [
        twin, sizes[5], sizes[100]]
    assert [h["id"] for h in store.search_messages('"red panda" sleeps')] == [other]
    assert [h["id"] for h in store.search_messages('"red panda" NOT leaf')] == [other]
    assert {h["id"] for h in store.search_messages('"red panda" OR "panda red"')} == set(
        sizes.values()) | {twin, other, twin + 1}
    assert [h["id"] for h in store.search_messages('"red panda"', sort="oldest",
                                                   limit=2)] == [sizes[100], sizes[20000]]


def test_phrase_ranking_window_is_the_newest_matches(store, monkeypatch):
    from hermes_agent.builtin_plugins.sessions import search

    monkeypatch.setattr(search, "RANK_WINDOW", 4)
    sid = store.create_session(source="cli")
    old_short = store.append_message(sid, "user", "blue whale")
    newer = [store.append_message(sid, "user", "blue whale " + "sea " * (10 - i))
             for i in range(6)]
    hits = [h["id"] for h in store.search_messages('"blue whale"', limit=10)]
    assert hits == newer[-4:][::-1]  # the four newest, shortest first; the oldest is out
    assert old_short not in hits


def test_varint_reads_fts5_docsize():
    from hermes_agent.builtin_plugins.sessions.shortest import varint

    assert [varint(b) for b in (b"\x05", b"\x81\x00", b"\x81\x80\x00", b"\x7f\x01", None,
                                 b"")] == [5, 128, 16384, 127, 0, 0]


@settings(max_examples=200, deadline=None)
@given(sizes=st.lists(st.integers(min_value=0, max_value=70000), max_size=60),
       keep=st.integers(min_value=1, max_value=25))
def test_phrase_snippets_are_made_for_every_row_of_the_final_top(sizes, keep):
    """The walk marks the rows that get a snippet as they come (newest first); every row of
    the final top ``keep`` (shortest first, newest first among equals) must be marked."""
    from hermes_agent.builtin_plugins.sessions.shortest import Shortest

    def varint(n: int) -> bytes:
        groups = [n & 0x7F]
        while n > 0x7F:
            n >>= 7
            groups.append(0x80 | (n & 0x7F))
        return bytes(reversed(groups))

    best = Shortest(keep)
    marked = [best(varint(n)) for n in sizes]
    top = sorted(range(len(sizes)), key=lambda i: (sizes[i], i))[:keep]
    assert all(marked[i] for i in top)
    assert sum(marked) <= len(sizes)


def test_phrase_walk_function_is_registered_once_per_connection(store, monkeypatch):
    """Registering an SQL function expires the connection's prepared statements, so the
    phrase walk's function is registered when a read connection opens, not per search; a
    connection the store did not open gets it on its first phrase search."""
    import sqlite3

    from hermes_agent.builtin_plugins.sessions import search, shortest

    sid = store.create_session(source="cli")
    ids = [store.append_message(sid, "user", f"red panda {'leaf ' * n}") for n in (9, 2, 5)]
    store.search_messages("warm")
    calls: list[object] = []
    real = shortest.prepare
    monkeypatch.setattr(shortest, "prepare", lambda conn: (calls.append(conn), real(conn)))
    for _ in range(3):
        assert [h["id"] for h in store.search_messages('"red panda"')] == [ids[1], ids[2],
                                                                          ids[0]]
    assert calls == []
    plain = sqlite3.connect(store.path)
    try:
        assert [h["id"] for h in search.search_messages(plain, '"red panda"', limit=2)] == [
            ids[1], ids[2]]
        assert calls == [plain]
    finally:
        plain.close()

"""Local memory's store on real SQLite files: schema, modes, WAL, dedupe, pruning, FTS
sanitising against hostile queries, CJK recall and the BM25 + recency ranking."""

from __future__ import annotations

import sqlite3
import stat
import time
from pathlib import Path

import pytest

from hermes_agent.plugins.memory.local import ranking
from hermes_agent.plugins.memory.local.query import parse, stem
from hermes_agent.plugins.memory.local.store import FactStore, db_path, normalise

DAY = 86400.0


@pytest.fixture
def store(tmp_path: Path) -> FactStore:
    opened = FactStore(db_path(tmp_path / "home"))
    yield opened
    opened.close()


def texts(found: list) -> list[str]:
    return [fact.text for fact, _ in found]


def search(store: FactStore, query: str, limit: int = 5, **kw) -> list[str]:
    return texts(store.search(parse(query), limit=limit, half_life_days=30, **kw))


def test_file_modes_wal_and_tables(store: FactStore, tmp_path: Path) -> None:
    store.add("I use neovim for everything")
    path = tmp_path / "home" / "memories" / "local.db"
    assert store.path == path
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert store.journal_mode() == "wal"
    assert Path(f"{path}-wal").exists()
    with sqlite3.connect(path) as other:  # a second reader (the CLI) sees the committed row
        assert other.execute("SELECT text FROM facts").fetchall() == [("I use neovim for everything",)]
        tables = {row[0] for row in other.execute("SELECT name FROM sqlite_master")}
    assert {"facts", "facts_fts", "facts_trigram"} <= tables


def test_identical_facts_are_stored_once(store: FactStore) -> None:
    first, new = store.add("I use Neovim.", now=1000.0, session_id="s1")
    again, new_again = store.add("  i use   neovim ", now=2000.0, session_id="s2")
    assert new and not new_again and again.id == first.id
    assert again.last_used_at == 2000.0 and again.source_session == "s1"
    assert store.count() == 1
    assert normalise("Ｉ use NEOVIM!") == "i use neovim"


def test_indexes_follow_deletes(store: FactStore) -> None:
    fact, _ = store.add("We deploy on Fly.io")
    assert search(store, "deploy") == ["We deploy on Fly.io"]
    store.delete(fact.id)
    assert search(store, "deploy") == [] and search(store, "fly") == []
    assert store.delete(fact.id) is None


def test_least_recently_used_facts_are_pruned_beyond_max_facts(tmp_path: Path) -> None:
    store = FactStore(db_path(tmp_path), max_facts=3)
    for i, text in enumerate(["fact alpha one", "fact beta two", "fact gamma three"]):
        store.add(text, now=1000.0 + i)
    store.touch([1], now=5000.0)  # alpha was recalled: now the most recently used
    store.add("fact delta four", now=6000.0)
    assert sorted(f.text for f in store.recent(10)) == ["fact alpha one", "fact delta four",
                                                          "fact gamma three"]
    assert search(store, "beta") == []  # its index rows went too
    store.close()


@pytest.mark.parametrize("hostile", [
    '"', '""', "'", "*", "-", "^", ":", "(", ")", "()", "AND", "OR", "NOT", "NEAR",
    "NEAR(neovim editor, 2)", 'text:neovim', '{text}: neovim', "neovim AND", "OR neovim",
    'neo" OR "vim', "neo*vim*", "\x00neovim", "+neovim -editor", "-- DROP TABLE facts;",
    "'; DELETE FROM facts; --", "a" * 5000, "😀🔥", "\\", "%", "_", "neovim\u200b",
])
def test_hostile_queries_never_raise_and_never_act_as_syntax(store: FactStore,
                                                             hostile: str) -> None:
    store.add("I use neovim as my editor")
    store.add("Our team uses AND logic gates")
    found = search(store, hostile)
    assert isinstance(found, list)
    assert store.count() == 2
    if "neovim" in hostile.lower():
        assert "I use neovim as my editor" in found


def test_operators_are_plain_words(store: FactStore) -> None:
    store.add("The NEAR field team works in Berlin")
    store.add("I use neovim as my editor")
    assert search(store, "NEAR") == ["The NEAR field team works in Berlin"]
    assert parse("NEAR(a b) OR col:x").word_match() == '"near"* OR "b" OR "col" OR "x"'


def test_cjk_recall_through_trigrams_and_like(store: FactStore) -> None:
    store.add("我喜欢喝绿茶")
    store.add("我住在上海浦东")
    store.add("I use neovim")
    assert search(store, "我喜欢什么茶？")[0] == "我喜欢喝绿茶"
    assert search(store, "上海") == ["我住在上海浦东"]  # two characters: LIKE
    assert search(store, "茶") == ["我喜欢喝绿茶"]  # one character: LIKE
    query = parse("绿茶 and neovim")
    assert query.short_cjk == ("绿茶",) and query.words == ("neovim",)
    assert sorted(search(store, "绿茶 neovim")) == ["I use neovim", "我喜欢喝绿茶"]


def test_word_forms_match_through_stems_and_prefixes(store: FactStore) -> None:
    store.add("We deployed the api on Fly.io")
    assert search(store, "deployment?") == ["We deployed the api on Fly.io"]
    assert stem("editors") == "editor" and stem("uses") == "uses" and stem("running") == "runn"


def test_stopwords_are_dropped_unless_nothing_else_is_left() -> None:
    assert parse("what do I use for my editor?").words == ("use", "editor")
    assert parse("what do I").words == ("what", "do", "i")


def test_relevance_decides_and_recency_breaks_ties(store: FactStore) -> None:
    now = 400 * DAY
    store.add("I use vim at work", now=now - 300 * DAY)
    store.add("I use vim at home", now=now - 1 * DAY)
    found = search(store, "vim", now=now)
    assert found == ["I use vim at home", "I use vim at work"]  # equal BM25: newer first

    store.add("kubernetes kubernetes kubernetes cluster on hetzner", now=now - 200 * DAY)
    store.add("a kubernetes note among many other unrelated words in a long sentence here",
              now=now)
    found = search(store, "kubernetes hetzner", now=now)
    assert found[0] == "kubernetes kubernetes kubernetes cluster on hetzner"  # relevance wins


def test_ranking_formula() -> None:
    assert ranking.recency(1000.0, 1000.0, 30) == 1.0
    assert ranking.recency(0.0, 30 * DAY, 30) == pytest.approx(0.5)
    assert ranking.recency(0.0, 60 * DAY, 30) == pytest.approx(0.25)
    group = [ranking.Candidate(1, -4.0, 0.0), ranking.Candidate(2, -2.0, 30 * DAY)]
    scored = dict(ranking.rank([group], {}, now=30 * DAY, half_life_days=30, limit=5))
    assert scored[1] == pytest.approx(0.8 * 1.0 + 0.2 * 0.5)
    assert scored[2] == pytest.approx(0.8 * 0.5 + 0.2 * 1.0)


def test_search_is_fast_enough_to_leave_untimed_here(store: FactStore) -> None:
    """A smoke check of the candidate cap on a few thousand rows (the benchmark measures)."""
    for i in range(2000):
        store.add(f"I use tool number {i} for project {i % 37}", now=1000.0 + i)
    started = time.perf_counter()
    found = store.search(parse("which tool for project 5"), limit=5, half_life_days=30)
    assert len(found) == 5 and time.perf_counter() - started < 1.0


def test_another_process_writes_while_this_one_reads(store: FactStore) -> None:
    """WAL: a second process (an agent, `hermes facts add`) writes while this one searches."""
    import subprocess
    import sys

    store.add("I use neovim as my editor")
    script = ("import sys\nfrom pathlib import Path\n"
              "from hermes_agent.plugins.memory.local.store import FactStore\n"
              "s = FactStore(Path(sys.argv[1]))\n"
              "for i in range(200):\n    s.add(f'I use helper tool {i} at work')\n")
    child = subprocess.Popen([sys.executable, "-c", script, str(store.path)])
    reads = 0
    while child.poll() is None:
        assert "I use neovim as my editor" in search(store, "neovim editor")
        reads += 1
    assert child.wait() == 0 and reads > 0
    assert store.count() == 201
    assert len(search(store, "helper tool", limit=50)) == 50

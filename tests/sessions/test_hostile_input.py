"""The store against hostile input: damaged files, undecodable text, costly queries, huge
numbers, wrong types. Each test does what an attacker (or an unlucky user) would."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_agent.builtin_plugins.sessions import cjk, health, search
from hermes_agent.api import (InvalidArgumentError,
                                                             SearchTimeoutError,
                                                             SessionStoreError)
from hermes_agent.builtin_plugins.sessions.store import SqliteSessionStore

HERMES = Path(sys.executable).with_name("hermes")


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def interior_pages(path: Path) -> list[int]:
    """Numbers of the interior table b-tree pages (page type 0x05) of a database file."""
    data = path.read_bytes()
    size = int.from_bytes(data[16:18], "big")
    size = 65536 if size == 1 else size
    return [n + 1 for n in range(1, len(data) // size)
            if data[n * size] == 0x05]


def test_corrupted_interior_page_is_refused_untouched_with_the_fix(tmp_path):
    path = tmp_path / "state.db"
    store = SqliteSessionStore(path)
    sid = store.create_session(source="cli")
    store.replace_messages(sid, [{"role": "user", "content": f"message {i} " + "x" * 300}
                                 for i in range(3000)])
    store.close()
    assert health.recorded(path)  # a clean close records the healthy file
    pages = interior_pages(path)
    assert pages, "the corpus is big enough for interior b-tree pages"
    page_size = int.from_bytes(path.read_bytes()[16:18], "big")
    with path.open("r+b") as handle:  # garbage in the cell area, the page header kept
        handle.seek((pages[0] - 1) * page_size + 12)
        handle.write(b"\xa5\x5a" * ((page_size - 12) // 2))
    before = digest(path)
    reopened = SqliteSessionStore(path)
    with pytest.raises(SessionStoreError) as info:
        reopened.append_message(sid, "user", "must not be written")
    message = str(info.value)
    assert "is damaged" in message and "not changed" in message
    assert ".recover" in message and "hermes sessions import" in message
    reopened.close()
    assert digest(path) == before
    assert not Path(f"{path}-wal").exists() or Path(f"{path}-wal").stat().st_size == 0


def test_health_check_is_remembered_per_file_identity(tmp_path):
    path = tmp_path / "state.db"
    store = SqliteSessionStore(path)
    store.create_session("s", source="cli")
    store.close()
    assert health.recorded(path)
    os.utime(path, ns=(1, 1))  # another identity: checked again on the next open
    assert not health.recorded(path)
    reopened = SqliteSessionStore(path)
    assert reopened.get_session("s") is not None
    reopened.close()
    assert health.recorded(path)


# --- undecodable text -----------------------------------------------------------------------

def test_surrogates_through_the_api_are_repaired(store):
    sid = store.create_session(source="cli\udcff", title="caf\udcc3\udca9 \ud800")
    assert store.get_session(sid)["title"] == "café \ufffd"
    assert store.get_session(sid)["source"] == "cli\ufffd"
    store.append_message(sid, "user", "na\udcc3\udcafve \ud83d\ude00 bytes \udcff",
                         tool_calls=[{"function": {"name": "t\udcff", "arguments": "{}"}}])
    store.append_message(sid, "user", [{"type": "text", "text": "part \udcfe"}])
    contents = [m["content"] for m in store.get_messages(sid)]
    assert contents == ["naïve 😀 bytes \ufffd", [{"type": "text", "text": "part \ufffd"}]]
    assert [h["id"] for h in store.search_messages("na\udcc3\udcafve")] != []
    assert store.search_messages("\udcff\ud800") == []
    assert store.resolve_session_id("\udcff") is None
    assert store.list_sessions(source="cli\udcff")[0]["id"] == sid


def test_a_title_set_by_any_caller_loses_terminal_controls_and_bidi_overrides(store):
    """`hermes sessions list` prints titles: a C1 CSI (\x9b) drives a terminal like ESC [, and
    a bidi override makes a title read backwards."""
    sid = store.create_session(source="cli", title="Deploy\x9b2J plan \u202eevil\u202c \x1b[31m")
    assert store.get_session(sid)["title"] == "Deploy 2J plan evil [31m"
    store.set_session_title(sid, "Plan\u200bB\ufeff")
    assert store.get_session(sid)["title"] == "PlanB"


def test_invalid_utf8_argv_through_the_real_cli(home, tmp_path):
    store = SqliteSessionStore(home=home)
    sid = store.create_session("sess_caf", source="cli", title="café notes")
    store.append_message(sid, "user", "the café menu")
    store.close()
    env = {**os.environ, "HERMES_HOME": str(home), "LC_ALL": "C.UTF-8", "PYTHONUTF8": "1"}
    for argv in ([b"sessions", b"search", b"caf\xc3\xa9 \xff\xfe"],
                 [b"sessions", b"search", b"caf\xc3\xa9"],
                 [b"sessions", b"show", b"caf\xc3\xa9 notes"],
                 [b"sessions", b"show", b"\xff\xfe"],
                 [b"sessions", b"search", b"menu", b"--source", b"\xffcli"]):
        done = subprocess.run([str(HERMES), *argv], capture_output=True, env=env, timeout=120)
        assert b"Traceback" not in done.stderr, done.stderr.decode(errors="replace")
        if argv == [b"sessions", b"search", b"caf\xc3\xa9"]:
            assert done.returncode == 0 and b"sess_caf" in done.stdout
        if argv[1] == b"show" and argv[2].startswith(b"caf"):
            assert done.returncode == 0 and "café notes".encode() in done.stdout
        if argv[2] == b"\xff\xfe":
            assert done.returncode == 1 and b"no session matches" in done.stderr


# --- costly queries -------------------------------------------------------------------------

def test_crafted_queries_are_capped():
    prefixes = " ".join(f"{chr(97 + i % 26)}{chr(97 + i // 26 % 26)}x*" for i in range(300))
    parsed = search.parse(prefixes)
    terms = [t for g in parsed.groups for t in g]
    assert len(terms) == search.MAX_TERMS
    assert sum(t.prefix for t in terms) == search.MAX_PREFIX_TERMS
    short = [t for g in search.parse("a* bc* def*").groups for t in g]
    assert [t.prefix for t in short] == [False, False, True]
    cjk = " OR ".join(chr(0x4E00 + i) + chr(0x4E01 + i) for i in range(200))
    assert len(search.parse(cjk).groups) == search.MAX_TERMS
    assert len(search.parse(" OR ".join(["数据", "日志"] * 100)).groups) == 2  # repeats merged


def test_short_cjk_terms_use_the_trigram_vocabulary(store):
    sid = store.create_session(source="cli")
    many = "".join("数" + chr(0x4E00 + i) for i in range(cjk.MAX_TRIGRAMS + 50))
    ids = [store.append_message(sid, "user", text) for text in (
        "结尾是数据", "数", "迁移 in the middle", many, "english only")]
    assert [h["id"] for h in store.search_messages("数据", sort="oldest")] == [ids[0]]
    assert [h["id"] for h in store.search_messages("数", sort="oldest")] == [ids[0], ids[1],
                                                                              ids[3]]
    assert [h["id"] for h in store.search_messages("迁 OR 龙虎", sort="oldest")] == [ids[2]]
    assert store.search_messages("龙虎") == []
    with store._reader() as conn:  # the very common character is not used to narrow
        assert cjk._trigram_match(conn, ["数"]) is None
        assert cjk._trigram_match(conn, ["龙虎"]) == ""


@pytest.fixture
def cjk_store(store):
    sid = store.create_session(source="cli")
    store.replace_messages(sid, [{"role": "user", "content": f"记录 {i} 数据迁移 日志 部署"}
                                 for i in range(600)])
    return store


def test_the_time_budget_stops_a_search_through_the_progress_handler(cjk_store, monkeypatch):
    ticks = iter(range(10**9))  # a clock that advances one second per reading
    monkeypatch.setattr(search, "_clock", lambda: float(next(ticks)))
    cjk_store.search_budget_s = 3
    with pytest.raises(SearchTimeoutError, match="longer than 3 s.*fewer or longer"):
        cjk_store.search_messages("数据 OR 日志 OR 部署")
    monkeypatch.setattr(search, "_clock", lambda: 0.0)  # time stands still: no interruption
    assert len(cjk_store.search_messages("数据 OR 日志", limit=50)) == 50
    cjk_store.append_message(cjk_store.list_sessions()[0]["id"], "user", "the store still works")


def test_appends_proceed_while_a_search_runs(cjk_store, monkeypatch):
    sid = cjk_store.list_sessions()[0]["id"]
    searching, appended = threading.Event(), threading.Event()
    waited: list[bool] = []

    def clock() -> float:  # called by the search's progress handler, mid-statement
        if threading.current_thread().name == "searcher" and not searching.is_set():
            searching.set()
            waited.append(appended.wait(timeout=60))
        return 0.0

    monkeypatch.setattr(search, "_clock", clock)
    results: list[int] = []
    searcher = threading.Thread(target=lambda: results.append(
        len(cjk_store.search_messages("数据 OR 日志", limit=30))), name="searcher")
    searcher.start()
    assert searching.wait(timeout=60)
    ids = [cjk_store.append_message(sid, "user", f"appended during the search {i}")
           for i in range(20)]  # the searcher is paused inside its SQLite statement
    appended.set()
    searcher.join(timeout=60)
    assert waited == [True] and results == [30] and len(set(ids)) == 20


def test_truncation_keeps_not_and_whole_words():
    word = "w" * 150
    for pad in range(0, 400, 7):  # the cut lands everywhere around "NOT secret"
        query = "x" * pad + " " + " ".join([word] * 12) + ' NOT secret "a quoted phrase"'
        parsed = search.parse(query)
        positive = {t.text for g in parsed.groups for t in g if not t.negated}
        assert "secret" not in positive and "NO" not in positive and "N" not in positive
        assert positive <= {"x" * pad, word, "a quoted phrase"}
        assert all(len(t.text) in (pad, 150) or t.text == "a quoted phrase" or t.negated
                   for g in parsed.groups for t in g)
    assert search.parse("a" * 5000).groups == []  # one token longer than the cap: dropped


# --- numbers and types ----------------------------------------------------------------------

def test_huge_and_negative_counts_name_the_range(store, home, capsys):
    sid = store.create_session(source="cli")
    for call in (lambda: store.search_messages("x", limit=10**20),
                 lambda: store.search_messages("x", offset=-1),
                 lambda: store.list_sessions(limit=10**20),
                 lambda: store.get_messages(sid, limit=-5),
                 lambda: store.list_sessions_rich(limit=True),
                 lambda: store.update_token_counts(sid, input_tokens=10**20)):
        with pytest.raises(InvalidArgumentError, match=r"from 0 to \d+|64-bit"):
            call()
    assert store.get_messages(sid, limit=None) == []
    from hermes_agent.cli.root import main

    code = main(["sessions", "search", "x", "--limit", str(10**20)])
    err = capsys.readouterr().err
    assert code == 2 and "0<=x<=1000000" in err


def test_a_string_is_one_source_and_other_types_are_refused(store):
    a = store.create_session(source="cli")
    b = store.create_session(source="telegram")
    store.append_message(a, "user", "deploy from the cli")
    store.append_message(b, "user", "deploy from telegram")
    assert [h["source"] for h in store.search_messages("deploy", source_filter="cli")] == ["cli"]
    assert [h["source"] for h in store.search_messages("deploy", exclude_sources="cli")] == [
        "telegram"]
    assert [h["role"] for h in store.search_messages("deploy", role_filter="user")] == [
        "user", "user"]
    assert [r["id"] for r in store.list_sessions_rich(exclude_sources="cli")] == [b]
    for bad in (5, [b"cli"], ["cli", None]):
        with pytest.raises(InvalidArgumentError, match="source_filter must"):
            store.search_messages("deploy", source_filter=bad)


# --- private files --------------------------------------------------------------------------

def test_files_and_directories_are_private_under_a_loose_umask(tmp_path):
    old = os.umask(0)
    try:
        path = tmp_path / "a" / "b" / "state.db"
        store = SqliteSessionStore(path)
        sid = store.create_session(source="cli")
        for i in range(60):  # enough writes for the upkeep thread and the lock file
            store.append_message(sid, "user", f"secret {i}")
        store.search_messages("secret")
        modes = {p.name: p.stat().st_mode & 0o777 for p in path.parent.iterdir()}
        store.close()
    finally:
        os.umask(old)
    assert {"state.db", "state.db-wal", "state.db-shm", "state.db-lock"} <= set(modes)
    assert set(modes.values()) == {0o600}, modes
    assert (tmp_path / "a").stat().st_mode & 0o777 == 0o700
    assert path.parent.stat().st_mode & 0o777 == 0o700
    assert Path(f"{path}-checked").stat().st_mode & 0o777 == 0o600


def test_existing_open_files_are_tightened(tmp_path):
    path = tmp_path / "state.db"
    sqlite3.connect(path).close()
    path.touch()
    os.chmod(path, 0o644)
    Path(f"{path}-lock").touch(mode=0o666)
    os.chmod(f"{path}-lock", 0o666)
    SqliteSessionStore(path).list_sessions()
    assert path.stat().st_mode & 0o777 == 0o600
    assert Path(f"{path}-lock").stat().st_mode & 0o777 == 0o600


# --- fuzzing ----------------------------------------------------------------------------------

_WORDS = st.sampled_from(["OR", "NOT", "AND", '"', "*", "a*", "ab*", "数据", "迁移日志", "-",
                          "deploy", "chat-send", "(", ")", ":", "NEAR", "^", "''"])
_ANY = st.text(st.characters(exclude_categories=()), max_size=12)


@settings(max_examples=150, derandomize=True, deadline=None)
@given(parts=st.lists(st.one_of(_WORDS, _ANY), max_size=12))
def test_fuzz_search_never_raises(fuzz_store, parts):
    query = " ".join(parts)
    for sort in (None, "newest"):
        results = fuzz_store.search_messages(query, limit=5, sort=sort)
        assert isinstance(results, list) and len(results) <= 5
        for hit in results:
            hit["snippet"].encode("utf-8")


@pytest.fixture(scope="module")
def fuzz_store(tmp_path_factory):
    store = SqliteSessionStore(tmp_path_factory.mktemp("fuzz") / "state.db")
    sid = store.create_session(source="cli")
    store.replace_messages(sid, [{"role": "user", "content": text} for text in (
        "deploy the chat-send service", "数据迁移日志", "a b c d", "abc abd OR NOT AND")])
    yield store
    store.close()


def test_sqlite_refuses_what_the_repair_avoids():
    """The failure the text repair prevents: SQLite cannot bind a lone surrogate."""
    conn = sqlite3.connect(":memory:")
    with pytest.raises(UnicodeEncodeError):
        conn.execute("SELECT ?", ("\udcff",))


def test_a_cjk_group_is_narrowed_by_its_longer_words(store, monkeypatch):
    """"数 zz0 OR 数 zz1 ...": a very common character beside a word that is in no row. The
    word narrows the trigram lookup (any script), so the common character's rows are never
    read one by one; a short CJK term's vocabulary OR is only added beside a longer term
    when it is small."""
    sid = store.create_session(source="cli")
    many = "".join("数" + chr(0x4E00 + i) for i in range(cjk.MAX_TRIGRAMS + 50))
    ids = [store.append_message(sid, "user", text) for text in (
        many, "数据 in the middle", "数据 and more", "龙虎 zz0", "english only zz0")]
    read: list[str] = []
    real = cjk._verified
    monkeypatch.setattr(cjk, "_verified", lambda conn, sql, params, checks, want: (
        read.append(sql), real(conn, sql, params, checks, want))[1])
    assert store.search_messages(" OR ".join(f"数 zz{i}" for i in range(8))) == []
    assert not any(s.startswith("messages m") for s in read)  # no scan of the messages
    assert [h["id"] for h in store.search_messages("数 middle")] == [ids[1]]
    assert [h["id"] for h in store.search_messages("数 iddl")] == [ids[1]]  # substrings
    assert [h["id"] for h in store.search_messages("数据 MORE", sort="oldest")] == [ids[2]]
    assert [h["id"] for h in store.search_messages("龙虎 zz0 OR 数 zz0")] == [ids[3]]
    assert store.search_messages("龙虎 middle") == []
    with store._reader() as conn:
        assert cjk._trigram_match(conn, ["数", "zz0"]) == '"zz0"'
        assert cjk._trigram_match(conn, ["龙虎", "zz0"]) == '"zz0" AND ("龙虎 ")'
        assert cjk._trigram_match(conn, ["虎", "abcd"]) == '"abc" AND "bcd" AND ("虎 z")'
        assert cjk._trigram_match(conn, ["数据", "in the"]) == (
            '"in " AND "n t" AND " th" AND "the" AND ("数据 ")')
        assert cjk._trigram_match(conn, ["没有", "zz0"]) == ""
        assert cjk._trigram_match(conn, ["zz", "数"]) is None  # short, and too common

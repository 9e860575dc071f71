"""`hermes insights` in a subprocess over sessions written through the session store's
interface, on the SQLite store and on the PostgreSQL one (the same figures)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from .ops_home import hermes, make_home, store_of

DAY = 86400.0
MODEL = {"model": {"provider": "custom", "base_url": "http://127.0.0.1:9/v1",
                   "default": "fake-model"}}


@pytest.fixture(autouse=True)
def _state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))


def seed(home: Path) -> None:
    """Within the last 7 days: 3 sessions of model a (cli), 2 of model b (telegram), one with
    no known cost; 40 days ago: one more (outside --days 7)."""
    now = time.time()
    kernel, store = store_of(home)
    try:
        rows = [("a", "cli", 1 * DAY, 1000, 100, 3000, 0.50, None),
                ("a", "cli", 2 * DAY, 2000, 200, 0, 0.25, 0.30),
                ("a", "cli", 2 * DAY + 60, 500, 50, 500, None, None),
                ("b", "telegram", 3 * DAY, 4000, 400, 1000, 1.00, None),
                ("b", "telegram", 0.1 * DAY, 100, 10, 0, 0.05, None),
                ("a", "cli", 40 * DAY, 99999, 9999, 0, 9.99, None)]
        for model, source, ago, inp, out, cached, estimated, actual in rows:
            sid = store.create_session(source=source, model=model, started_at=now - ago)
            store.append_message(sid, "user", "hello", timestamp=now - ago)
            store.update_token_counts(sid, input_tokens=inp, output_tokens=out,
                                      cache_read_tokens=cached, api_call_count=1,
                                      estimated_cost_usd=estimated, actual_cost_usd=actual)
    finally:
        kernel.close()


def check(home: Path) -> None:
    run = hermes(home, "insights", "--days", "7", "--json")
    assert run.code == 0, run.err
    report: dict[str, Any] = json.loads(run.out)
    total = report["total"]
    assert total["sessions"] == 5 and total["messages"] == 5 and total["api_calls"] == 5
    assert total["input_tokens"] == 7600 and total["output_tokens"] == 760
    assert total["cache_read_tokens"] == 4500
    assert total["cost_usd"] == pytest.approx(0.50 + 0.30 + 1.00 + 0.05)  # actual over estimated
    assert total["unpriced_sessions"] == 1
    assert report["cache_hit_ratio"] == pytest.approx(4500 / (7600 + 4500))
    assert list(report["by_model"]) == ["b", "a"]  # the costlier first
    assert report["by_model"]["a"]["sessions"] == 3
    assert report["by_source"]["telegram"]["cost_usd"] == pytest.approx(1.05)
    assert sum(d["sessions"] for d in report["by_day"].values()) == 5
    assert [s["cost_usd"] for s in report["most_expensive"]][:2] == [1.00, 0.50]
    only_cli = json.loads(hermes(home, "insights", "--days", "7", "--source", "cli",
                                 "--json").out)
    assert only_cli["total"]["sessions"] == 3
    every = json.loads(hermes(home, "insights", "--days", "60", "--json").out)
    assert every["total"]["sessions"] == 6
    text = hermes(home, "insights", "--days", "7").out
    assert "sessions 5" in text and "cost: $1.85 (1 sessions without a known cost)" in text
    assert "MODEL" in text and "SOURCE" in text and "telegram" in text
    assert "cache hits 37% of the prompt tokens" in text


def test_insights_on_the_sqlite_store(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    seed(home)
    check(home)
    empty = make_home(tmp_path, "empty")
    assert "No sessions in that time." in hermes(empty, "insights").out


def test_insights_on_the_postgres_store(tmp_path: Path, pg_schemas: Any) -> None:
    home = make_home(tmp_path, config={**MODEL, "sessions": {"store": "postgres",
                                                             "dsn": pg_schemas("insights")}})
    seed(home)
    assert not (home / "state.db").exists()
    check(home)
    backup = hermes(home, "backup", "-o", str(tmp_path))
    assert backup.code == 0 and "pg_dump" in backup.out, backup.err

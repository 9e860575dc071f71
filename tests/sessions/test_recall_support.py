"""What session_search and titles need from the store: leaving sessions out of a search, and
setting a title only while a session has none."""

from __future__ import annotations

import pytest

from hermes_agent.api import TitleConflictError


def test_search_leaves_out_excluded_sessions_before_the_limit(store) -> None:
    for sid in ("mine", "other"):
        store.create_session(sid, source="cli")
    for i in range(30):  # the excluded session holds the newest and most matches
        store.append_message("mine", "user", f"zebra crossing {i}")
    store.append_message("other", "user", "a zebra in the old notes")
    hits = store.search_messages("zebra", limit=5, exclude_sessions=["mine"])
    assert [h["session_id"] for h in hits] == ["other"]
    assert {h["session_id"] for h in store.search_messages("zebra", limit=50)} == {"mine", "other"}
    cjk = store.search_messages("数据库", exclude_sessions="mine")  # one id as a string
    assert cjk == []
    store.append_message("mine", "user", "数据库迁移")
    store.append_message("other", "user", "数据库备份")
    assert [h["session_id"] for h in store.search_messages("数据库", exclude_sessions="mine")] \
        == ["other"]


def test_set_title_if_untitled_keeps_a_title_already_set(store) -> None:
    store.create_session("a", source="cli")
    store.create_session("b", source="cli", title="Chosen by the user")
    assert store.set_title_if_untitled("a", "  Docker   build fix ") == "Docker build fix"
    assert store.get_session("a")["title"] == "Docker build fix"
    assert store.set_title_if_untitled("a", "Another") is None  # already titled
    assert store.set_title_if_untitled("b", "Generated") is None
    assert store.get_session("b")["title"] == "Chosen by the user"
    store.create_session("c", source="cli")
    with pytest.raises(TitleConflictError):
        store.set_title_if_untitled("c", "Docker build fix")
    assert store.get_session("c")["title"] is None

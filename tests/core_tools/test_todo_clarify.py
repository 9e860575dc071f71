"""todo (per-session state) and clarify (through the surface's callback)."""

from __future__ import annotations

from .conftest import Call


def test_todo_replace_merge_and_read_per_session(call: Call) -> None:
    assert call("todo", {}) == {"todos": [], "summary": {"total": 0, "pending": 0,
                                                          "in_progress": 0, "completed": 0,
                                                          "cancelled": 0}}
    items = [{"id": "1", "content": "write tests", "status": "in_progress"},
             {"id": "2", "content": "ship", "status": "pending"}]
    assert call("todo", {"todos": items})["summary"]["total"] == 2
    merged = call("todo", {"todos": [{"id": "1", "content": "", "status": "completed"},
                                     {"id": "3", "content": "docs", "status": "pending"}],
                           "merge": True})
    assert merged["todos"] == [{"id": "1", "content": "write tests", "status": "completed"},
                               {"id": "2", "content": "ship", "status": "pending"},
                               {"id": "3", "content": "docs", "status": "pending"}]
    assert merged["summary"]["completed"] == 1
    assert call("todo", {}, session_id="s2")["todos"] == []
    assert len(call("todo", {})["todos"]) == 3


def test_todo_rejects_bad_items(call: Call) -> None:
    bad = call("todo", {"todos": [{"id": "1", "content": "x", "status": "done"}]})["error"]
    assert "status 'done'" in bad and "completed" in bad
    assert "no id" in call("todo", {"todos": [{"content": "x"}]})["error"]
    assert "must be a list" in call("todo", {"todos": {"id": "1"}})["error"]
    as_text = call("todo", {"todos": '[{"id": "9", "content": "from a string", "status": "pending"}]'})
    assert as_text["todos"][0]["id"] == "9"


def test_clarify_asks_through_the_callback(call: Call) -> None:
    seen: list[tuple[str, list[str] | None]] = []

    def ask(question: str, choices: list[str] | None) -> str:
        seen.append((question, choices))
        return "  blue  "

    result = call("clarify", {"question": " Which colour? ",
                              "choices": ["red", {"label": "blue"}, "", "green", "pink", "grey"]},
                  clarify_callback=ask)
    assert result == {"question": "Which colour?", "choices_offered": ["red", "blue", "green", "pink"],
                      "user_response": "blue"}
    assert seen == [("Which colour?", ["red", "blue", "green", "pink"])]
    open_ended = call("clarify", {"question": "Name?"}, clarify_callback=lambda q, c: "Ada")
    assert open_ended["choices_offered"] is None and open_ended["user_response"] == "Ada"


def test_clarify_without_anyone_to_ask_is_a_recoverable_error(call: Call) -> None:
    assert "Nobody can answer" in call("clarify", {"question": "Proceed?"})["error"]

    def broken(question: str, choices: list[str] | None) -> str:
        raise EOFError("stdin closed")

    assert "EOFError" in call("clarify", {"question": "Proceed?"}, clarify_callback=broken)["error"]
    assert "needs a 'question'" in call("clarify", {"question": ""})["error"]

"""Cutting a transcript around the query's matches, and reading a query's terms."""

from __future__ import annotations

from hermes_agent.builtin_plugins.recall.excerpt import (
    excerpt,
    match_positions,
    query_terms,
    transcript,
)


def test_query_terms_skip_operators_negations_and_stars() -> None:
    terms = query_terms('"Exact Phrase" docker OR deploy* NOT kubernetes (build)')
    assert terms.phrases == ("exact phrase",)
    assert terms.words == ("exact", "phrase", "docker", "deploy", "build")
    assert query_terms("disk full").phrases == ("disk full",)  # bare words: also a phrase
    assert query_terms("NOT x").empty


def test_the_phrase_wins_then_nearby_terms_then_any_term() -> None:
    text = "disk alone " + "x" * 500 + " full alone " + "y" * 500 + " the disk is full here"
    near = text.index("disk is full")
    assert match_positions(text, query_terms('"disk is full"')) == [near]
    # both words within 200 characters: the place of the rarer (here the first listed)
    assert match_positions(text, query_terms("full disk")) == [text.index("full here")]
    spread = "disk " + "z" * 900 + " full"
    assert match_positions(spread, query_terms("disk full")) == [0, len(spread) - 4]


def test_the_window_covers_most_matches_a_quarter_before_and_the_rest_after() -> None:
    text = "a" * 10_000 + "needle" + "b" * 300 + "needle" + "c" * 10_000 + "needle" + "d" * 5_000
    cut = excerpt(text, "needle", 4_000)
    first = 10_000
    assert cut.startswith(f"[... {first - 1_000} earlier characters left out ...]\n")
    body = cut.split("\n")[1]
    assert len(body) == 4_000 and body.count("needle") == 2
    assert cut.endswith("later characters left out ...]")
    assert excerpt("short", "x", 4_000) == "short"


def test_transcript_shows_roles_tool_calls_and_their_arguments() -> None:
    text = transcript([
        {"role": "system", "content": "hidden"},
        {"role": "user", "content": [{"type": "text", "text": "look"}, {"type": "image_url"}]},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "1", "type": "function",
         "function": {"name": "terminal", "arguments": "{\"command\": \"echo \\u6570\"}"}}]},
        {"role": "tool", "tool_name": "terminal", "content": "数"},
        {"role": "assistant", "content": "done"}])
    assert text == ('[USER] look\n\n[ASSISTANT called terminal] {"command": "echo 数"}\n\n'
                    "[TOOL terminal] 数\n\n[ASSISTANT] done")

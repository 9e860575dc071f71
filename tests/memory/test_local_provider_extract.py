"""Local memory's rule-based extractor: what a user's message yields as facts, and what it
must never store (questions, greetings, code, fragments, secrets)."""

from __future__ import annotations

import pytest

from hermes_agent.plugins.memory.local.extract import extract_facts, looks_secret, problem


@pytest.mark.parametrize("message, facts", [
    ("I use neovim for everything.", ["I use neovim for everything."]),
    ("Hi! I prefer tabs over spaces. What's new?", ["I prefer tabs over spaces."]),
    ("My favourite language is Rust.", ["My favourite language is Rust."]),
    ("my shell: fish with starship", ["my shell: fish with starship"]),
    ("We deploy on Fly.io every Friday", ["We deploy on Fly.io every Friday"]),
    ("Our database is Postgres 16", ["Our database is Postgres 16"]),
    ("Call me Sam, please", ["Call me Sam, please"]),
    ("Remember that the staging box is at 10.0.0.5", ["the staging box is at 10.0.0.5"]),
    ("btw, I live in Lisbon", ["I live in Lisbon"]),
    ("I am a backend developer at Acme", ["I am a backend developer at Acme"]),
    ("I don't like trailing commas", ["I don't like trailing commas"]),
    ("我喜欢喝绿茶。", ["我喜欢喝绿茶"]),
    ("请记住我的生日是五月三日", ["我的生日是五月三日"]),
    ("I use `uv` for Python projects", ["I use uv for Python projects"]),
    ("I use neovim.\nI use neovim.", ["I use neovim."]),
])
def test_durable_first_person_statements_are_kept(message: str, facts: list[str]) -> None:
    assert extract_facts(message) == facts


@pytest.mark.parametrize("message", [
    "What editor do I use?",
    "Do I prefer tabs",
    "Can you remind me what my shell is?",
    "hello there, how are you",
    "Thanks a lot!",
    "I want you to write a poem about cats",
    "I'm trying to fix this bug in the parser",
    "I think I use emacs",
    "I use",  # too short
    "I use " + "very " * 80 + "long tools",  # too long
    "The build failed again with exit code 2",  # not about the user
    "```\nI use this snippet in production\n```",  # code
    "    I use this indented code line here",
    "> I use vim (a quote of someone else)",
    "你好吗？",
])
def test_questions_greetings_code_and_fragments_are_dropped(message: str) -> None:
    assert extract_facts(message) == []


@pytest.mark.parametrize("message", [
    "My password is hunter2",
    "my api key: sk-proj-abcdefghijklmnopqrstuvwx",
    "I use the token ghp_abcdefghijklmnopqrstuvwxyz0123 for CI",
    "My AWS key is AKIAABCDEFGHIJKLMNOP",
    "I use Bearer abcdefghijklmnopqrstuvwxyz012345 for the api",
    "Our database is at postgres://admin:s3cret@db.internal/app",
    "My session cookie is 9f8e7d6c5b4a39281706f5e4d3c2b1a0",
    "I keep my private key here -----BEGIN RSA PRIVATE KEY-----",
    "我的密码是 hunter2",
])
def test_secrets_are_never_extracted(message: str) -> None:
    assert extract_facts(message) == []


def test_secret_detection_spares_ordinary_text() -> None:
    assert not looks_secret("My project is at /home/me/code/project2024/src")
    assert not looks_secret("We deploy on Fly.io with a 2024-era config")
    assert not looks_secret("I use the Python-3.12-slim-bookworm image")
    assert looks_secret("the key is 3f9a8b7c6d5e4f3a2b1c0d9e")


def test_problem_explains_refusals() -> None:
    assert problem("I use neovim daily") is None
    assert "characters" in (problem("short") or "")
    assert "secret" in (problem("my password is hunter22") or "")
    assert problem("我喜欢绿茶") is None  # CJK characters weigh more toward the minimum

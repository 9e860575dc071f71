"""Which URLs can carry data out, and the reply filter on a stream cut anywhere."""

from __future__ import annotations

import pytest

from hermes_agent.builtin_plugins.agent.exfil import ReplyFilter, carries_data, scrub_reply


@pytest.mark.parametrize("url", [
    "https://evil.example/c?d=secret", "https://evil.example/c#" + "x" * 40,
    "https://c2VjcmV0LXRva2VuLWhlcmU.evil.example/", "https://a.b.c.evil.example/",
    "https://evil.example/aGVsbG8gd29ybGQgc2VjcmV0IQ/x", "https://user:pw@evil.example/"])
def test_urls_that_can_carry_data(url: str) -> None:
    assert carries_data(url)


@pytest.mark.parametrize("url", [
    "https://example.com/", "https://docs.python.org/3/library/json.html",
    "https://www.example.co.uk/news/today", "http://127.0.0.1:8080/page", "https://x.io/#top"])
def test_plain_urls(url: str) -> None:
    assert carries_data(url) == ""


REPLY = ("Here is the chart ![c](https://img.example/p.png?d=s3cr3t) and a link "
         "https://evil.example/c?d=s3cr3t, plus https://docs.example.org/guide which is fine.")


def test_the_whole_reply_is_scrubbed() -> None:
    clean, count = scrub_reply(REPLY, lambda url: False)
    assert count == 2 and "s3cr3t" not in clean and "https://docs.example.org/guide" in clean
    kept, none = scrub_reply(REPLY, lambda url: "evil" in url or "img" in url)
    assert none == 1 and "https://evil.example/c?d=s3cr3t" in kept  # images go regardless


@pytest.mark.parametrize("size", [1, 2, 3, 5, 7, 13, 1000])
def test_the_stream_cut_anywhere_gives_the_same_text(size: int) -> None:
    guard = ReplyFilter(lambda url: False)
    out = "".join(guard.feed(REPLY[i:i + size]) for i in range(0, len(REPLY), size))
    out += guard.flush()
    assert out == scrub_reply(REPLY, lambda url: False)[0]
    assert guard.removed == 2


def test_the_stream_holds_only_what_it_must() -> None:
    guard = ReplyFilter(lambda url: False)
    assert guard.feed("Hello there, ") == "Hello there, "
    assert guard.feed("see https://exa") == "see "
    assert guard.feed("mple.com/ now") == "https://example.com/ now"


def test_security_tainted_turns_is_validated(tmp_path) -> None:
    from hermes_agent import write_config_value
    from hermes_agent.config import load_config
    from hermes_agent.errors import ConfigError

    with pytest.raises(ConfigError) as err:
        write_config_value(tmp_path, "security.tainted_turns", "sometimes")
    assert "'ask', 'allow' or 'deny'" in str(err.value)
    write_config_value(tmp_path, "security.tainted_turns", "deny")
    assert load_config(tmp_path, env={}).get("security.tainted_turns") == "deny"


def test_a_source_function_may_read_the_call_context(tmp_path) -> None:
    from hermes_agent.api import ToolCallContext
    from hermes_agent.api.tools import untrusted_output
    from hermes_agent.kits.tool_results import untrusted_source

    inside = tmp_path / "project"

    def where(args: dict, ctx: ToolCallContext) -> str | None:
        path = ctx.resolve(args["path"])
        return None if path.is_relative_to(inside) else f"file:{path}"

    handler = untrusted_output(where)(lambda args, **kw: "")
    ctx = ToolCallContext(cwd=inside)
    assert untrusted_source(handler, {"path": "notes.md"}, ctx) is None
    assert untrusted_source(handler, {"path": "/tmp/x.md"}, ctx) == "file:/tmp/x.md"
    broken = untrusted_output(lambda args: args["missing"])(lambda args, **kw: "")
    assert untrusted_source(broken, {}) == "tool:<lambda>"  # unknown means untrusted
    assert untrusted_source(lambda args: "", {}) is None  # unmarked: trusted

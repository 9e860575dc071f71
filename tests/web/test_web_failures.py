"""Backend failures become error results the model can act on; a short Retry-After is
honoured once; a repeated query is answered from the session's cache."""

from __future__ import annotations

from .conftest import call
from .fake_web import Fault


def test_a_short_retry_after_is_honoured_once(kernel_with, web) -> None:
    web.fail(Fault(429, headers={"Retry-After": "0"}))
    result = call(kernel_with({"backend": "fakesearch"}), "web_search", query="x")
    assert result["success"] is True and web.count("/search") == 2


def test_a_long_retry_after_is_reported(kernel_with, web) -> None:
    web.fail(Fault(429, headers={"Retry-After": "120"}))
    result = call(kernel_with({"backend": "fakesearch"}), "web_search", query="x")
    assert (result["kind"], result["retry_after"]) == ("rate_limited", 120.0)
    assert result["error_type"] == "web_rate_limited" and web.count("/search") == 1


def test_rate_limited_twice_is_reported(kernel_with, web) -> None:
    web.fail(Fault(429, headers={"Retry-After": "0"}), Fault(429, headers={"Retry-After": "0"}))
    result = call(kernel_with({"backend": "fakesearch"}), "web_search", query="x")
    assert result["kind"] == "rate_limited" and web.count("/search") == 2


def test_http_errors_and_malformed_answers(kernel_with, web) -> None:
    kernel = kernel_with({"backend": "fakesearch"})
    web.fail(Fault(503))
    result = call(kernel, "web_search", query="x")
    assert result["kind"] == "http" and "HTTP 503" in result["error"]
    web.fail(Fault(200, body=b"<html>not json"))
    result = call(kernel, "web_search", query="y")
    assert result["kind"] == "malformed" and result["backend"] == "fakesearch"


def test_a_backend_that_hangs_times_out(kernel_with, web) -> None:
    web.fail(Fault(200, hang=True))
    result = call(kernel_with({"backend": "fakesearch", "timeout": 0.3}), "web_search", query="x")
    assert result["kind"] == "timeout" and "web.timeout" in result["error"]


def test_a_backend_bug_is_an_error_result(kernel_with, web) -> None:
    result = call(kernel_with({"backend": "broken"}), "web_search", query="x")
    assert result["kind"] == "backend_error" and "RuntimeError: the backend has a bug" in result["error"]


def test_a_failing_original_provider(kernel_with, web) -> None:
    web.fail(Fault(500))
    result = call(kernel_with({"backend": "original"}), "web_search", query="x")
    assert result["kind"] == "http" and "web backend 'original' failed" in result["error"]


def test_a_repeated_query_is_answered_from_the_session_cache(kernel_with, web) -> None:
    kernel = kernel_with({"backend": "fakesearch", "cache_entries": 2})
    first = call(kernel, "web_search", query="Green tea", limit=3)
    again = call(kernel, "web_search", query="  green   TEA ", limit=3)
    assert web.count("/search") == 1
    assert again.pop("cached") is True and again == first
    call(kernel, "web_search", session="s2", query="green tea", limit=3)  # another session
    assert web.count("/search") == 2
    call(kernel, "web_search", query="green tea", limit=4)  # other arguments
    call(kernel, "web_search", query="black tea", limit=3)  # evicts the oldest of two
    call(kernel, "web_search", query="green tea", limit=3)
    assert web.count("/search") == 5


def test_failures_are_not_cached(kernel_with, web) -> None:
    kernel = kernel_with({"backend": "fakesearch"})
    web.fail(Fault(503))
    assert call(kernel, "web_search", query="x")["kind"] == "http"
    assert call(kernel, "web_search", query="x")["success"] is True


def test_bad_arguments(kernel_with, web) -> None:
    kernel = kernel_with({"backend": "fakesearch"})
    assert call(kernel, "web_search", query=" ")["kind"] == "invalid"
    assert call(kernel, "web_search", query="x", limit="many")["kind"] == "invalid"
    assert call(kernel, "web_extract", urls=[])["kind"] == "invalid"
    assert len(call(kernel, "web_search", query="x", limit=500)["data"]["web"]) == 10


def test_an_interrupt_stops_waiting_and_tries_no_fallback(kernel_with, web) -> None:
    import json
    import threading

    from hermes_agent.api import ToolCallContext

    web.fail(Fault(200, hang=True))
    kernel = kernel_with({"backend": "fakesearch", "fallback": ["paid"]})
    stop = threading.Event()
    stop.set()
    text = kernel.tools.dispatch("web_search", {"query": "x"},
                                 context=ToolCallContext(session_id="s", interrupt_event=stop))
    assert json.loads(text)["kind"] == "interrupted"
    assert web.count("/search?backend=paid") == 0


"""The Mem0 REST client against the fake Mem0 server: request shapes and headers, filters,
retries with backoff and Retry-After, no retry on other 4xx, timeouts and time budgets, the
circuit breaker, and the API key kept out of errors and logs."""

from __future__ import annotations

import logging
import socket
import time
from email.utils import formatdate

import pytest

from hermes_agent.plugins.memory.mem0.breaker import CircuitBreaker
from hermes_agent.plugins.memory.mem0.client import retry_after
from hermes_agent.plugins.memory.mem0.errors import (KEY_URL, Mem0Error, Mem0Unavailable,
                                                     status_error)

from .mem0_support import KEY, client_for

ALICE = {"AND": [{"user_id": "alice"}]}


def test_add_sends_the_token_and_the_documented_body(mem0) -> None:
    client = client_for(mem0)
    added = client.add([{"role": "user", "content": "I drink green tea"},
                        {"role": "assistant", "content": "Noted."}],
                       user_id="alice", agent_id="hermes", metadata={"session_id": "s1"})
    request = mem0.requests_to("POST", "/v1/memories/")[0]
    assert request.headers["authorization"] == f"Token {KEY}"
    assert request.headers["content-type"] == "application/json"
    assert request.body == {"messages": [{"role": "user", "content": "I drink green tea"},
                                         {"role": "assistant", "content": "Noted."}],
                            "user_id": "alice", "agent_id": "hermes",
                            "metadata": {"session_id": "s1"}}  # unset fields are left out
    assert [m["memory"] for m in added] == ["I drink green tea"]
    assert added[0]["event"] == "ADD"


def test_search_sends_query_filters_and_top_k_and_only_sees_what_they_allow(mem0) -> None:
    mem0.seed("alice drinks green tea", user_id="alice")
    mem0.seed("bob drinks black tea", user_id="bob")
    found = client_for(mem0).search("what tea do they drink", filters=ALICE, top_k=3)
    assert [m["memory"] for m in found] == ["alice drinks green tea"]
    assert isinstance(found[0]["score"], float)
    request = mem0.requests[-1]
    assert (request.method, request.path) == ("POST", "/v2/memories/search/")
    assert request.body == {"query": "what tea do they drink", "filters": ALICE, "top_k": 3}


def test_list_get_update_delete_and_ping(mem0) -> None:
    client = client_for(mem0)
    memory_id = mem0.seed("likes hiking", user_id="alice", metadata={"source": "x"})
    mem0.seed("likes chess", user_id="bob")
    assert [m["id"] for m in client.list(filters=ALICE)] == [memory_id]
    assert client.get(memory_id)["memory"] == "likes hiking"
    assert client.update(memory_id, text="likes climbing")["text"] == "likes climbing"
    client.delete(memory_id)
    assert client.ping()["status"] == "ok"
    assert [(r.method, r.path) for r in mem0.requests] == [
        ("POST", "/v2/memories/"), ("GET", f"/v1/memories/{memory_id}/"),
        ("PUT", f"/v1/memories/{memory_id}/"), ("DELETE", f"/v1/memories/{memory_id}/"),
        ("GET", "/v1/ping/")]
    assert mem0.requests[0].body == {"filters": ALICE, "page": 1, "page_size": 100}
    assert mem0.requests[2].body == {"text": "likes climbing"}
    with pytest.raises(Mem0Error) as missing:
        client.get(memory_id)
    assert missing.value.status == 404 and "HTTP 404" in str(missing.value)


def test_server_errors_are_retried_with_growing_backoff(mem0) -> None:
    sleeps: list[float] = []
    mem0.fail(503, times=2)
    assert client_for(mem0, backoff=0.02, sleeps=sleeps).ping()["status"] == "ok"
    assert len(mem0.requests) == 3 and len(sleeps) == 2
    assert 0.01 <= sleeps[0] <= 0.02 and 0.02 <= sleeps[1] <= 0.04  # doubled, with jitter


def test_retries_run_out_and_the_error_says_so(mem0) -> None:
    mem0.fail(500, always=True)
    with pytest.raises(Mem0Error) as failed:
        client_for(mem0, retries=2).search("tea", filters=ALICE)
    assert len(mem0.requests) == 3
    assert failed.value.status == 500 and failed.value.outage
    assert "HTTP 500" in str(failed.value) and "tried 3 times" in str(failed.value)


def test_429_waits_as_long_as_retry_after_says(mem0) -> None:
    sleeps: list[float] = []
    mem0.fail(429, retry_after="0.4")
    started = time.monotonic()
    client_for(mem0, sleeps=sleeps).ping()
    assert sleeps == [0.4] and time.monotonic() - started >= 0.39
    assert len(mem0.requests) == 2


def test_a_long_retry_after_is_capped_and_a_429_without_one_backs_off(mem0) -> None:
    sleeps: list[float] = []
    mem0.fail(429, retry_after="120").fail(429)
    client_for(mem0, retry_after_cap=0.2, backoff=0.01, sleeps=sleeps).ping()
    assert sleeps[0] == 0.2 and sleeps[1] <= 0.02


def test_retry_after_in_both_forms() -> None:
    assert retry_after("3") == 3.0 and retry_after("0.5") == 0.5
    assert 0.0 < retry_after(formatdate(time.time() + 30, usegmt=True)) <= 30.0
    assert retry_after(formatdate(time.time() - 30, usegmt=True)) == 0.0
    assert retry_after("soon") is None and retry_after(None) is None


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
def test_other_client_errors_are_not_retried(mem0, status: int) -> None:
    sleeps: list[float] = []
    mem0.fail(status, body={"detail": "nope"})
    with pytest.raises(Mem0Error) as failed:
        client_for(mem0, sleeps=sleeps).search("tea", filters=ALICE)
    assert failed.value.status == status and not failed.value.outage
    assert len(mem0.requests) == 1 and sleeps == []


def test_a_refused_key_says_what_to_fix(mem0) -> None:
    with pytest.raises(Mem0Error) as refused:
        client_for(mem0, key="m0-WrongKey-0000").ping()
    message = str(refused.value)
    assert refused.value.status == 401
    assert message.startswith("MEM0_API_KEY was refused by the Mem0 server at http://127.0.0.1")
    assert "m0-WrongKey-0000" not in message
    with pytest.raises(Mem0Error) as keyless:
        client_for(mem0, key="").ping()
    assert "wants an API key" in str(keyless.value) and "MEM0_API_KEY" in str(keyless.value)
    assert "authorization" not in mem0.requests[-1].headers
    hosted = status_error(401, "Invalid API key", what="GET /v1/ping/",
                          host="https://api.mem0.ai", has_key=True, attempts=1)
    assert f"check the key at {KEY_URL}" in str(hosted)


def test_a_hung_read_times_out(mem0) -> None:
    mem0.hang(30)
    started = time.monotonic()
    with pytest.raises(Mem0Error) as slow:
        client_for(mem0, read=0.3, retries=0).search("tea", filters=ALICE)
    assert time.monotonic() - started < 5
    assert "did not answer POST /v2/memories/search/ within 0.3s" in str(slow.value)
    assert slow.value.outage and slow.value.status is None


def test_an_add_is_not_repeated_after_a_read_timeout_but_a_search_is(mem0) -> None:
    mem0.hang(30, times=6)
    with pytest.raises(Mem0Error):
        client_for(mem0, read=0.2, retries=2).add([{"role": "user", "content": "x"}],
                                                  user_id="alice")
    assert len(mem0.requests) == 1  # the server may have stored it: never twice
    with pytest.raises(Mem0Error):
        client_for(mem0, read=0.2, retries=2).search("x", filters=ALICE)
    assert len(mem0.requests) == 4


def test_the_budget_bounds_the_whole_call_retries_included(mem0) -> None:
    mem0.hang(30, always=True)
    started = time.monotonic()
    with pytest.raises(Mem0Error):
        client_for(mem0, read=10.0, retries=5).search("tea", filters=ALICE, budget=0.5)
    assert time.monotonic() - started < 3


def test_connection_errors_are_retried_and_name_the_host() -> None:
    with socket.socket() as probe:  # a port nobody listens on once it is closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    sleeps: list[float] = []
    client = client_for(None, host=f"http://user:hunter2@127.0.0.1:{port}", retries=2,
                        sleeps=sleeps)
    with pytest.raises(Mem0Error) as down:
        client.ping()
    assert len(sleeps) == 2 and down.value.outage
    assert f"cannot reach Mem0 at http://user:***@127.0.0.1:{port}" in str(down.value)
    assert "hunter2" not in str(down.value)


def test_the_breaker_pauses_calls_after_failures_in_a_row_and_lets_a_trial_through(mem0) -> None:
    now = [1000.0]
    breaker = CircuitBreaker(threshold=3, cooldown=30.0, clock=lambda: now[0])
    client = client_for(mem0, retries=0, breaker=breaker)
    mem0.fail(503, always=True)
    for _ in range(3):
        with pytest.raises(Mem0Error):
            client.ping()
    assert breaker.is_open and len(mem0.requests) == 3
    with pytest.raises(Mem0Unavailable) as paused:
        client.ping()
    assert "paused after 3 failed calls in a row" in str(paused.value)
    assert len(mem0.requests) == 3  # refused without a request
    now[0] += 31  # the pause is over: one trial; it fails, so the pause starts again
    with pytest.raises(Mem0Error):
        client.ping()
    assert breaker.is_open and len(mem0.requests) == 4
    now[0] += 31
    mem0.clear_faults()
    assert client.ping()["status"] == "ok"  # the trial succeeds: closed again
    assert not breaker.is_open and breaker.consecutive_failures == 0


def test_client_errors_do_not_open_the_breaker(mem0) -> None:
    breaker = CircuitBreaker(threshold=1, cooldown=30.0)
    client = client_for(mem0, retries=0, breaker=breaker)
    mem0.fail(400, times=3)
    for _ in range(3):
        with pytest.raises(Mem0Error):
            client.search("x", filters=ALICE)
    assert not breaker.is_open


def test_the_key_never_reaches_errors_or_logs(mem0, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="hermes_agent.plugins.mem0")
    mem0.fail(500, times=3, body={"detail": f"token {KEY} is throttled"})
    mem0.fail(400, body={"error": f"bad request for Token {KEY}"})
    client = client_for(mem0, retries=2)
    errors = []
    for _ in range(2):
        with pytest.raises(Mem0Error) as failed:
            client.search("x", filters=ALICE)
        errors.append(str(failed.value))
    assert "token *** is throttled" in errors[0] and "Token ***" in errors[1]
    assert caplog.text and KEY not in caplog.text
    assert all(KEY not in e for e in errors)

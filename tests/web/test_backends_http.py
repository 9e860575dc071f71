"""What holds for every HTTP backend (SearXNG, Brave, Tavily, Exa) against its fake server:
retries, Retry-After, timeouts, unreachable servers, malformed answers, masked keys,
availability and loading from discovery."""

from __future__ import annotations

import logging
import socket

import pytest

from hermes_agent.api import WebError, WebResult
from hermes_agent.testing import make_kernel

from .support import CASES, KEY, Case, Sleeps, seed

pytestmark = pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])


def test_finds_what_the_server_has(case: Case) -> None:
    with seed(case.server()) as server:
        results = case.make(server).search("agent runtime", limit=5)
    assert [r.url for r in results] == ["https://hermes.example/", "https://pluggy.example/docs"]
    assert all(isinstance(r, WebResult) and r.title and r.snippet for r in results)
    assert all(r.source.startswith(case.name) for r in results)


def test_limit_trims_the_results(case: Case) -> None:
    with seed(case.server()) as server:
        assert len(case.make(server).search("runtime", limit=1)) == 1


def test_5xx_is_retried_with_backoff(case: Case) -> None:
    sleeps = Sleeps()
    with seed(case.server()) as server:
        server.fail(503)
        results = case.make(server, sleeps=sleeps).search("runtime")
        assert len(server.requests) == 2
    assert results and len(sleeps.waits) == 1 and 0 < sleeps.waits[0] <= 0.5


def test_429_waits_as_long_as_retry_after_says(case: Case) -> None:
    sleeps = Sleeps()
    with seed(case.server()) as server:
        server.fail(429, retry_after="2")
        assert case.make(server, sleeps=sleeps).search("runtime")
    assert sleeps.waits == [2.0]


def test_a_retry_after_beyond_the_cap_fails_at_once(case: Case) -> None:
    sleeps = Sleeps()
    with seed(case.server()) as server:
        server.fail(429, retry_after="120")
        with pytest.raises(WebError) as caught:
            case.make(server, {"retry_after_cap": 30}, sleeps).search("runtime")
        assert len(server.requests) == 1
    error = caught.value
    assert (error.kind, error.retry_after, error.status) == ("rate_limited", 120.0, 429)
    assert "retry after 120s" in str(error) and sleeps.waits == []


def test_retries_stop_after_max_retries(case: Case) -> None:
    sleeps = Sleeps()
    with seed(case.server()) as server:
        server.fail(500, times=5)
        with pytest.raises(WebError) as caught:
            case.make(server, {"max_retries": 2}, sleeps).search("runtime")
        assert len(server.requests) == 3
    assert caught.value.kind == "http" and caught.value.status == 500
    assert "HTTP 500" in str(caught.value) and "3 tries" in str(caught.value)


def test_other_4xx_are_not_retried(case: Case) -> None:
    sleeps = Sleeps()
    with seed(case.server()) as server:
        server.fail(400, body={"error": "query too long"})
        with pytest.raises(WebError) as caught:
            case.make(server, sleeps=sleeps).search("runtime")
        assert len(server.requests) == 1
    assert caught.value.kind == "http" and caught.value.status == 400 and sleeps.waits == []


def test_a_hung_server_is_a_timeout(case: Case) -> None:
    with seed(case.server()) as server:
        server.hang(30)
        backend = case.make(server, {"timeout": 0.3, "max_retries": 0})
        with pytest.raises(WebError) as caught:
            backend.search("runtime")
    assert caught.value.kind == "timeout" and "did not answer within 0.3s" in str(caught.value)
    assert f"raise plugins.entries.{case.name}.timeout" in str(caught.value)


def test_a_timeout_is_retried(case: Case) -> None:
    with seed(case.server()) as server:
        server.hang(30)
        assert case.make(server, {"timeout": 0.3, "max_retries": 1}).search("runtime")
        assert len(server.requests) == 2


def test_an_unreachable_server_names_the_url_setting(case: Case) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed again below: nothing listens there
    backend = case.make(url=f"http://user:{KEY}@127.0.0.1:{port}", config={"max_retries": 1})
    with pytest.raises(WebError) as caught:
        backend.search("runtime")
    message = str(caught.value)
    assert caught.value.kind == "unreachable" and case.url_env in message
    assert KEY not in message and "user:***@127.0.0.1" in message


def test_malformed_json_is_reported(case: Case) -> None:
    with seed(case.server()) as server:
        server.malformed()
        with pytest.raises(WebError) as caught:
            case.make(server).search("runtime")
    assert caught.value.kind == "malformed" and "not JSON" in str(caught.value)


def test_json_of_the_wrong_shape_is_malformed(case: Case) -> None:
    with seed(case.server()) as server:
        server.malformed(raw=b'["not", "an", "object"]')
        with pytest.raises(WebError) as caught:
            case.make(server).search("runtime")
    assert caught.value.kind == "malformed"


def test_the_key_is_masked_in_errors_and_logs(case: Case, caplog) -> None:
    if not case.key_env:
        pytest.skip("SearXNG has no key (credentials in SEARXNG_URL: the unreachable test)")
    caplog.set_level(logging.DEBUG)
    with seed(case.server()) as server:
        server.fail(503, body={"error": f"upstream rejected token {KEY}"}, times=2)
        server.fail(400, body={"error": f"bad request for {KEY}"})
        with pytest.raises(WebError) as caught:
            case.make(server).search("runtime")
    assert "bad request for ***" in str(caught.value)
    assert KEY not in str(caught.value) and KEY not in caplog.text
    assert "upstream rejected token ***" in caplog.text


def test_available_only_when_configured(case: Case) -> None:
    assert case.make(url="http://127.0.0.1:1").is_available() is True
    assert case.backend({}).is_available() is False
    if case.key_env:
        assert case.backend({case.key_env: KEY}).is_available()
    with pytest.raises(WebError) as caught:
        case.backend({case.url_env: "http://127.0.0.1:1"} if case.key_env else {}).search("x")
    missing = case.key_env or case.url_env
    assert caught.value.kind == "missing_key" and f"{missing} is not set" in str(caught.value)


def test_declares_its_env_vars_and_settings(case: Case) -> None:
    backend = case.backend({})
    assert backend.name == case.name and backend.supports_search()
    assert set(backend.env_vars) == {v for v in (case.key_env, case.url_env) if v}
    schema = backend.get_config_schema()
    assert schema[0]["required"] and schema[0]["env_var"] == (case.key_env or case.url_env)
    assert "timeout" in {row["key"] for row in schema}


def test_loads_from_discovery_with_its_env_and_not_without(case: Case, tmp_path) -> None:
    with seed(case.server()) as server:
        kernel = make_kernel(tmp_path / "with", env=case.env(server))
        assert kernel.plugins[case.name].state == "loaded"
        backend = kernel.slots.get("web_search", case.name)
        assert backend.search("runtime")[0].url == "https://hermes.example/"
    bare = make_kernel(tmp_path / "without")
    status = bare.plugins[case.name]
    assert status.state == "missing env" and (case.key_env or case.url_env) in status.reason


def test_settings_come_from_plugins_entries(case: Case, tmp_path) -> None:
    config = {"plugins": {"entries": {case.name: {"timeout": 0.3, "max_retries": 0}}}}
    with seed(case.server()) as server:
        kernel = make_kernel(tmp_path, config=config, env=case.env(server))
        server.hang(30)
        with pytest.raises(WebError, match="within 0.3s"):
            kernel.slots.get("web_search", case.name).search("runtime")


def test_a_redirect_says_where_the_service_moved(case: Case) -> None:
    with seed(case.server()) as server:
        server.redirect("https://search.example/")
        with pytest.raises(WebError) as caught:
            case.make(server).search("runtime")
        assert len(server.requests) == 1
    message = str(caught.value)
    assert caught.value.status == 301 and "to https://search.example/" in message
    assert f"set {case.url_env} to where it points" in message


def test_one_client_serves_calls_until_closed(case: Case) -> None:
    with seed(case.server()) as server:
        backend = case.make(server)
        backend.search("runtime")
        first = backend._http
        backend.search("runtime")
        assert backend._http is first
        backend.close()
        backend.close()  # twice is fine
        assert backend.search("runtime") and backend._http is not first

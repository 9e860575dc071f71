"""The fake Mem0 server the mem0 tests (and plugin authors) rely on: its filter language, its
auth check and its faults behave as documented."""

from __future__ import annotations

import httpx2
import pytest

from hermes_agent.testing.fake_mem0 import FakeMem0Server

from .mem0_support import KEY


def search(server: FakeMem0Server, filters: object, key: str = KEY) -> httpx2.Response:
    return httpx2.post(f"{server.url}/v2/memories/search/", timeout=5,
                       headers={"Authorization": f"Token {key}"},
                       json={"query": "tea", "filters": filters})


@pytest.mark.parametrize("filters, expected", [
    ({"user_id": "alice"}, ["alice tea"]),
    ({"AND": [{"user_id": "alice"}, {"agent_id": "hermes"}]}, ["alice tea"]),
    ({"OR": [{"user_id": "alice"}, {"user_id": "bob"}]}, ["alice tea", "bob tea"]),
    ({"user_id": {"in": ["bob", "carol"]}}, ["bob tea"]),
    ({"NOT": [{"user_id": "alice"}]}, ["bob tea", "agent tea"]),
    ({"user_id": "*"}, ["alice tea", "bob tea"]),
    ({"metadata": {"source": "tool"}}, ["bob tea"]),
])
def test_filters(mem0: FakeMem0Server, filters: object, expected: list[str]) -> None:
    mem0.seed("alice tea", user_id="alice", agent_id="hermes")
    mem0.seed("bob tea", user_id="bob", metadata={"source": "tool"})
    mem0.seed("agent tea", agent_id="hermes")
    response = search(mem0, filters)
    assert response.status_code == 200
    assert sorted(m["memory"] for m in response.json()["results"]) == sorted(expected)


def test_unknown_filters_wrong_keys_and_faults(mem0: FakeMem0Server) -> None:
    assert search(mem0, {"colour": "red"}).status_code == 400
    assert search(mem0, {"user_id": "a"}, key="wrong").status_code == 401
    mem0.fail(429, retry_after="7")
    limited = search(mem0, {"user_id": "a"})
    assert limited.status_code == 429 and limited.headers["retry-after"] == "7"
    mem0.hang(30)
    with pytest.raises(httpx2.ReadTimeout):
        httpx2.get(f"{mem0.url}/v1/ping/", timeout=0.2)
    assert search(mem0, {"user_id": "a"}).status_code == 200  # faults are one per request
    assert [r.path for r in mem0.requests].count("/v1/ping/") == 1

"""Shared pieces of the mem0 provider tests: the fake server's key and client/provider
builders pointed at a :class:`FakeMem0Server`."""

from __future__ import annotations

from typing import Any

from hermes_agent.plugins.memory.mem0.breaker import CircuitBreaker
from hermes_agent.plugins.memory.mem0.client import Mem0Client, RetryPolicy, Timeouts
from hermes_agent.plugins.memory.mem0.provider import Mem0Provider
from hermes_agent.testing.fake_mem0 import FakeMem0Server

KEY = "m0-Zq8Lr2Vx9Kd4TestKey"


def client_for(server: FakeMem0Server | None, *, key: str = KEY, read: float = 5.0,
               retries: int = 2, backoff: float = 0.01, retry_after_cap: float = 30.0,
               breaker: CircuitBreaker | None = None, sleeps: list[float] | None = None,
               host: str | None = None) -> Mem0Client:
    """A client with tiny backoffs; the waits it takes are appended to ``sleeps``."""
    import time

    def sleep(seconds: float) -> None:
        if sleeps is not None:
            sleeps.append(seconds)
        time.sleep(seconds)

    assert host or server is not None
    return Mem0Client(api_key=key, host=host or server.url,  # type: ignore[union-attr]
                      timeouts=Timeouts(connect=2.0, read=read),
                      retry=RetryPolicy(max_retries=retries, backoff=backoff,
                                        retry_after_cap=retry_after_cap),
                      breaker=breaker or CircuitBreaker(threshold=100), sleep=sleep)


def provider_for(server: FakeMem0Server, user_id: str = "alice", *,
                 env: dict[str, str] | None = None, **settings: Any) -> Mem0Provider:
    """An initialized provider talking to ``server``."""
    provider = Mem0Provider({"max_retries": 0, **settings},
                            {"MEM0_API_KEY": KEY, "MEM0_HOST": server.url, **(env or {})})
    provider.initialize("session-1", hermes_home="/nowhere", platform="cli", user_id=user_id)
    return provider

"""The four HTTP backends and their fake servers, side by side, for tests that hold for all."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hermes_agent.kits.http import HTTPWebBackend
from hermes_agent.plugins.web.brave import BraveBackend
from hermes_agent.plugins.web.exa import ExaBackend
from hermes_agent.plugins.web.searxng import SearXNGBackend
from hermes_agent.plugins.web.tavily import TavilyBackend
from hermes_agent.testing.fake_web import (FakeBrave, FakeExa, FakeSearXNG, FakeTavily,
                                           FakeWebAPI)

KEY = "sk-test-7f3a9c2e5b1d"  # long enough to be masked wherever it would show


@dataclass
class Sleeps:
    """Stands in for time.sleep: records the waits, never waits."""

    waits: list[float] = field(default_factory=list)

    def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


@dataclass(frozen=True)
class Case:
    name: str
    backend: type[HTTPWebBackend]
    fake: type[FakeWebAPI]
    key_env: str  # "" for SearXNG
    url_env: str

    def server(self) -> FakeWebAPI:
        return self.fake(api_key=KEY) if self.key_env else self.fake()  # type: ignore[call-arg]

    def env(self, server: FakeWebAPI | None = None, *, key: str = KEY,
            url: str | None = None) -> dict[str, str]:
        env = {self.key_env: key} if self.key_env else {}
        base = url if url is not None else (server.url if server is not None else "")
        if base:
            env[self.url_env] = base
        return env

    def make(self, server: FakeWebAPI | None = None, config: dict[str, Any] | None = None,
             sleeps: Sleeps | None = None, **env: Any) -> HTTPWebBackend:
        return self.backend(self.env(server, **env), config or {}, sleep=sleeps or Sleeps())


CASES = [
    Case("searxng", SearXNGBackend, FakeSearXNG, "", "SEARXNG_URL"),
    Case("brave", BraveBackend, FakeBrave, "BRAVE_SEARCH_API_KEY", "BRAVE_SEARCH_BASE_URL"),
    Case("tavily", TavilyBackend, FakeTavily, "TAVILY_API_KEY", "TAVILY_BASE_URL"),
    Case("exa", ExaBackend, FakeExa, "EXA_API_KEY", "EXA_BASE_URL"),
]
BY_NAME = {case.name: case for case in CASES}


def seed(server: FakeWebAPI) -> FakeWebAPI:
    server.add("Hermes agent runtime", "https://hermes.example/",
               "Hermes is a self-hosted agent runtime. Every capability is a plugin.",
               "2025-03-14")
    server.add("Pluggy", "https://pluggy.example/docs",
               "Pluggy is the plugin system behind pytest and the hermes agent runtime.")
    server.add("Unrelated", "https://cats.example/", "Cats sleep a lot.")
    return server

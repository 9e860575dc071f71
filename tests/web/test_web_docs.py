"""docs/web.md against the code: every config key, error kind, `hermes web` command and
option, and the WebBackend interface."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

from hermes_agent.api import WebBackend
from hermes_agent.api.web import ERROR_KINDS
from hermes_agent.builtin_plugins.web.cli import web
from hermes_agent.builtin_plugins.web.failure import SELECTION_KINDS
from hermes_agent.builtin_plugins.web.settings import WebSettings

DOC = (Path(__file__).resolve().parents[2] / "docs" / "web.md").read_text(encoding="utf-8")


def section(title: str) -> str:
    start = DOC.index(title)
    end = DOC.find("\n## ", start + len(title))
    return DOC[start:end if end != -1 else None]


def test_every_config_key_is_in_the_example_with_its_default() -> None:
    example = section("## Configuration").split("```yaml")[1].split("```")[0]
    documented = dict(re.findall(r"^  (\w+): (\S+)", example, re.M))
    assert set(documented) == set(WebSettings.model_fields)
    for key, field in WebSettings.model_fields.items():
        default = field.get_default(call_default_factory=True)
        if isinstance(default, bool):
            shown = str(default).lower()
        else:
            shown = {"": '""', "[]": "[]"}.get(str(default), str(default))
        assert documented[key] == shown, key


def test_every_error_kind_is_documented() -> None:
    rows = re.findall(r"^\| `(\w+)` \|", section("## Failures"), re.M)
    assert set(rows) == {*ERROR_KINDS, *SELECTION_KINDS, "invalid"}


def test_every_command_and_option_is_documented() -> None:
    table = section("## `hermes web`")
    for name, command in web.commands.items():
        assert f"`hermes web {name}" in table, name
        for param in command.params:
            if param.opts[0].startswith("--"):
                usage = table.split(f"`hermes web {name}", 1)[1].split("\n", 1)[0]
                assert param.opts[0] in usage, (name, param.opts[0])


def test_the_interface_table_matches_the_base_class() -> None:
    rows = [line for line in section("## Writing a backend").splitlines()
            if line.startswith("| `")]
    documented = {n for row in rows for n in re.findall(r"`([a-z_]+)", row.split("|")[1])}
    members = {n for n, _ in inspect.getmembers(WebBackend) if not n.startswith("_")}
    assert documented == members
    required = {n for n in members if getattr(getattr(WebBackend, n), "__isabstractmethod__",
                                              False)}
    marked = {n for row in rows if row.split("|")[2].strip() == "yes"
              for n in re.findall(r"`([a-z_]+)", row.split("|")[1])}
    assert marked == required | {"name"}


def test_the_env_vars_of_every_backend_are_named() -> None:
    table = section("## Choosing a backend")
    for var in ("SEARXNG_URL", "BRAVE_SEARCH_API_KEY", "TAVILY_API_KEY", "EXA_API_KEY",
                "FIRECRAWL_API_KEY", "FIRECRAWL_API_URL"):
        assert f"`{var}`" in table


def test_the_example_backend_runs_against_a_fake_server(web, monkeypatch) -> None:
    import pytest

    from hermes_agent.api import WebError

    from .fake_web import Fault

    source = section("## Writing a backend").split("```python")[1].split("```")[0]
    namespace: dict[str, object] = {}
    exec(compile(source, "docs/web.md", "exec"), namespace)  # noqa: S102 - our own doc
    backend = namespace["ExampleSearch"](web.url)  # type: ignore[operator]
    assert not backend.is_available()
    monkeypatch.setenv("EXAMPLE_API_KEY", "k")
    assert backend.is_available() and backend.supports_search() and not backend.supports_extract()
    hits = backend.search("tea", 2)
    assert [(h.title, h.source) for h in hits] == [("tea result 1", "example"),
                                                   ("tea result 2", "example")]
    web.fail(Fault(429, headers={"Retry-After": "3"}), Fault(401), Fault(200, body=b"nope"))
    for kind, wait in (("rate_limited", 3.0), ("missing_key", None), ("malformed", None)):
        with pytest.raises(WebError) as caught:
            backend.search("tea")
        assert (caught.value.kind, caught.value.retry_after) == (kind, wait)

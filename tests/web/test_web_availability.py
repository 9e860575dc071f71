"""A bundled backend that cannot answer says why and how to fix it: the library to install,
the variable to set, the plugin to enable (never another plugin's fix), in words that fit
where the backend was selected; the original's backend names select ours."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from hermes_agent.api import ToolCallContext
from hermes_agent.cli.root import main
from hermes_agent.testing import make_kernel
from hermes_agent.testing.fake_web import FakeBrave

from .support import CASES, KEY, seed

KEYS = ("FIRECRAWL_API_KEY", "FIRECRAWL_API_URL", "SEARXNG_URL", "BRAVE_SEARCH_API_KEY")


def tool(home: Path, name: str, web: dict[str, Any], env: dict[str, str] | None = None,
         **config: Any) -> dict[str, Any]:
    web = {"allow_private_networks": True, **web}  # the URL below is never resolved
    kernel = make_kernel(home, config={"web": web, **config}, builtins=True,
                         env={"HERMES_HOME": str(home), **(env or {})})
    args = {"query": "hermes"} if name == "web_search" else {"urls": ["http://127.0.0.1:9/"]}
    return json.loads(kernel.tools.dispatch(name, args, context=ToolCallContext(session_id="s")))


def hermes(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def bare_env(home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for var in KEYS:
        monkeypatch.delenv(var, raising=False)
    return home


def test_local_without_trafilatura_names_the_extra_and_the_extract_check(
        home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "trafilatura", None)
    result = tool(home, "web_extract", {"extract_backend": "local"})
    assert result["kind"] == "missing_dependency" and result["backend"] == "local"
    assert "trafilatura is not installed" in result["error"]
    assert "pip install 'hermes-agent-runtime[web-local]'" in result["error"]
    assert "`hermes web extract https://example.com --backend local`" in result["error"]
    assert "hermes web search" not in result["error"] and "key" not in result["error"]


def test_ddgs_without_its_package_names_the_extra(home: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ddgs", None)
    result = tool(home, "web_search", {"search_backend": "ddgs"})
    assert result["kind"] == "missing_dependency"
    assert "pip install 'hermes-agent-runtime[web-ddgs]'" in result["error"]
    assert "`hermes web search test --backend ddgs`" in result["error"]


def test_firecrawl_without_its_key_names_the_key(home: Path) -> None:
    result = tool(home, "web_extract", {"backend": "firecrawl"})
    assert result["kind"] == "missing_key"
    assert "FIRECRAWL_API_KEY is not set" in result["error"] and "FIRECRAWL_API_URL" in result["error"]
    assert "`hermes web extract https://example.com --backend firecrawl`" in result["error"]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_http_backends_name_the_missing_variable(case: Any) -> None:
    backend = case.backend({}, {})
    assert not backend.is_available()
    assert (case.key_env or case.url_env) + " is not set" in backend.unavailable_reason()
    assert case.make(url="http://127.0.0.1:9").unavailable_reason() == ""


def test_local_turned_off_is_web_local_not_the_local_memory_plugin(home: Path) -> None:
    result = tool(home, "web_extract", {"extract_backend": "local"},
                  plugins={"disabled": ["web-local"]})
    assert result["kind"] == "not_loaded" and "hermes plugins enable web-local" in result["error"]
    assert "memory.provider" not in result["error"]


def test_the_cli_option_is_worded_as_an_option(bare_env: Path, capsys) -> None:
    code, _, err = hermes(capsys, "web", "search", "hello", "--backend", "searxng")
    assert code == 1 and "[missing_key]" in err and "SEARXNG_URL is not set" in err
    assert "`--backend NAME`" in err and "hermes config set --backend" not in err


def test_the_original_brave_free_selects_brave_and_says_so(home: Path) -> None:
    with seed(FakeBrave(api_key=KEY)) as brave:
        env = {"BRAVE_SEARCH_API_KEY": KEY, "BRAVE_SEARCH_BASE_URL": brave.url}
        result = tool(home, "web_search", {"backend": "brave-free"}, env=env)
        asked = [r.path for r in brave.requests]
    assert result["success"] is True and result["backend"] == "brave"
    assert result["data"]["web"][0]["title"] == "Hermes agent runtime"
    assert asked == ["/res/v1/web/search"]


def test_status_shows_an_unavailable_backend_with_its_reason(bare_env: Path, capsys,
                                                             monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "trafilatura", None)
    code, out, _ = hermes(capsys, "web", "status")
    assert code == 0
    assert "  firecrawl: unavailable: FIRECRAWL_API_KEY is not set" in out
    assert "  local: unavailable: its library trafilatura is not installed; install it with " \
           "pip install 'hermes-agent-runtime[web-local]'" in out
    code, out, _ = hermes(capsys, "web", "status", "--json")
    assert json.loads(out)["installed"]["firecrawl"].startswith("unavailable: FIRECRAWL_API_KEY")
    monkeypatch.setenv("FIRECRAWL_API_KEY", "fc-test-0123456789")
    assert "firecrawl: unavailable" not in hermes(capsys, "web", "status")[1]


def test_enabling_web_local_without_trafilatura_names_it(home: Path, capsys,
                                                         monkeypatch) -> None:
    from importlib.metadata import PackageNotFoundError, version

    from hermes_agent.builtin_plugins.plugin_admin import python_deps

    def installed(name: str) -> str:
        if name == "trafilatura":
            raise PackageNotFoundError(name)
        return version(name)

    monkeypatch.setattr(python_deps, "version", installed)
    (home / "config.yaml").write_text(yaml.safe_dump({"plugins": {"disabled": ["web-local"]}}))
    code, out, err = hermes(capsys, "plugins", "enable", "web-local")
    assert code == 0 and "web-local" in out
    assert "not installed (trafilatura>=2.0)" in err and "pip install 'trafilatura>=2.0'" in err

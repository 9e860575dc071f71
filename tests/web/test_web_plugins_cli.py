"""`hermes plugins list` and `doctor` show a web backend without its env var as missing env,
naming the variable and where to get it."""

from __future__ import annotations

import pytest

from hermes_agent.cli.root import main

NEEDS = {"searxng": "SEARXNG_URL", "brave": "BRAVE_SEARCH_API_KEY",
         "tavily": "TAVILY_API_KEY", "exa": "EXA_API_KEY"}


@pytest.fixture
def bare_home(home, monkeypatch):
    for var in NEEDS.values():
        monkeypatch.delenv(var, raising=False)
    return home


def run(capsys, *args: str) -> str:
    assert main(list(args)) == 0
    return capsys.readouterr().out


def test_list_shows_each_backend_missing_its_env(bare_home, capsys) -> None:
    out = run(capsys, "plugins", "list")
    for name, var in NEEDS.items():
        row = next(line for line in out.splitlines() if line.startswith(f"{name} "))
        assert "backend" in row and "bundled" in row and "missing env" in row
        assert f"Plugin {name} disabled (missing: {var})" in out


def test_doctor_says_where_to_get_the_key(bare_home, capsys) -> None:
    out = run(capsys, "plugins", "doctor")
    assert "required env var BRAVE_SEARCH_API_KEY is not set" in out
    assert "get it at https://api-dashboard.search.brave.com/app/keys" in out
    assert "required env var SEARXNG_URL is not set" in out


def test_list_shows_a_configured_backend_enabled(bare_home, monkeypatch, capsys) -> None:
    monkeypatch.setenv("TAVILY_API_KEY", "tvly-test-0123456789")
    out = run(capsys, "plugins", "list")
    row = next(line for line in out.splitlines() if line.startswith("tavily "))
    assert "missing env" not in row and "tvly-test-0123456789" not in out


def test_an_unconfigured_backend_is_no_warning_until_the_user_asks_for_it(tmp_path) -> None:
    from hermes_agent.builtin_plugins.plugin_admin.inactive import inactive_plugins
    from hermes_agent.testing import make_kernel

    def inactive(config: dict) -> dict[str, str]:
        kernel = make_kernel(tmp_path / str(len(list(tmp_path.iterdir()))), config=config)
        return {i.name: i.line for i in inactive_plugins(kernel.plugins.values(),
                                                         kernel.config)}

    assert not set(inactive({})) & set(NEEDS)  # nobody asked: `plugins list` shows it
    chosen = inactive({"web": {"backend": "brave", "extract_backend": "exa",
                               "fallback": ["searxng"]}})
    assert set(chosen) & set(NEEDS) == {"brave", "exa", "searxng"}
    assert "missing environment variable: BRAVE_SEARCH_API_KEY" in chosen["brave"]
    assert "tavily" in inactive({"plugins": {"enabled": ["tavily"]}})

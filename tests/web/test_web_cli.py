"""`hermes web status | search | extract`: a backend run directly, so a user can check a key."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from hermes_agent.cli.root import main

from .conftest import web_config


def hermes(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def configure(home: Path, web: Any, **section: Any) -> None:
    (home / "config.yaml").write_text(yaml.safe_dump(web_config(web, **section)))


def test_search_with_the_selected_backend_and_with_another(home, backends, web, capsys) -> None:
    configure(home, web, backend="fakesearch")
    code, out, _ = hermes(capsys, "web", "search", "green", "tea", "--limit", "2")
    assert code == 0
    assert out.splitlines()[:3] == ["2 result(s) from fakesearch for 'green tea'",
                                    "1. green tea result 1", f"   {web.url}/page/1"]
    code, out, _ = hermes(capsys, "web", "search", "tea", "--backend", "paid", "--json")
    data = json.loads(out)
    assert code == 0 and data["backend"] == "paid" and len(data["results"]) == 5
    assert data["results"][0]["snippet"] == "about tea (1)"


def test_search_reports_a_missing_key_without_trying_another(home, backends, web, capsys,
                                                             monkeypatch) -> None:
    configure(home, web, backend="fakesearch")
    code, _, err = hermes(capsys, "web", "search", "x", "--backend", "keyed")
    assert code == 1 and "[missing_key]" in err and "KEYED_API_KEY is not set" in err
    code, _, err = hermes(capsys, "web", "search", "x", "--backend", "locked")
    assert code == 1 and "FAKE_KEY is not set" in err
    monkeypatch.setenv("FAKE_KEY", "k")
    assert hermes(capsys, "web", "search", "x", "--backend", "locked")[0] == 0
    code, _, err = hermes(capsys, "web", "search", "x", "--backend", "nope")
    assert code == 1 and "[unknown_backend]" in err and "fakesearch" in err
    assert web.count("/search?backend=fakesearch") == 0


def test_search_without_a_selection_says_how_to_choose(home, backends, web, capsys) -> None:
    configure(home, web)
    code, _, err = hermes(capsys, "web", "search", "x")
    assert code == 1 and "[not_configured]" in err and "hermes config set web.backend" in err


def test_extract_checks_the_url_like_the_tool(home, backends, web, capsys) -> None:
    page = web.page("a", "Page A\nhello")
    configure(home, web, backend="fakesearch")
    code, _, err = hermes(capsys, "web", "extract", page)
    assert code == 1 and "[refused]" in err and web.requests == []
    configure(home, web, backend="fakesearch", allow_private_networks=True)
    code, out, _ = hermes(capsys, "web", "extract", page)
    assert code == 0 and out.startswith("# Page A  (fakesearch, 12 chars)") and "hello" in out
    code, out, _ = hermes(capsys, "web", "extract", page, "--backend", "original", "--json")
    assert code == 0 and json.loads(out)["page"]["content"] == "Page A\nhello"
    code, _, err = hermes(capsys, "web", "extract", f"{web.url}/page/none")
    assert code == 1 and "HTTP 404" in err


def test_status_shows_the_selection_and_the_installed_backends(home, backends, web,
                                                                capsys) -> None:
    configure(home, web, backend="paid", search_backend="fakesearch", fallback=["original"])
    code, out, _ = hermes(capsys, "web")
    assert code == 0
    assert out.splitlines()[:3] == ["search   fakesearch  (web.search_backend)",
                                    "extract  paid  (web.backend)", "fallback original"]
    assert "keyed (missing env)" in out
    data = json.loads(hermes(capsys, "web", "status", "--json")[1])
    assert data["installed"]["fakesearch"] == "loaded"
    assert data["selected"]["extract"] == {"backend": "paid", "key": "web.backend", "note": ""}


def test_hermes_config_knows_and_validates_the_web_keys(home, capsys) -> None:
    assert hermes(capsys, "config", "set", "web.search_backend", "searxng")[0] == 0
    assert hermes(capsys, "config", "set", "web.fallback", "[ddgs]")[0] == 0
    code, _, err = hermes(capsys, "config", "set", "web.extract_char_limit", "0")
    assert code == 1 and "web.extract_char_limit: Input should be greater than 0" in err
    code, _, err = hermes(capsys, "config", "set", "web.allow_private_networks", "maybe")
    assert code == 1 and "web.allow_private_networks" in err
    saved = yaml.safe_load((home / "config.yaml").read_text())["web"]
    assert saved == {"search_backend": "searxng", "fallback": ["ddgs"]}


def test_status_says_which_backend_extracts_for_a_search_only_web_backend(
        home, backends, web, capsys) -> None:
    configure(home, web, backend="searchonly", allow_private_networks=True)
    code, out, _ = hermes(capsys, "web")
    assert code == 0
    assert out.splitlines()[:2] == [
        "search   searchonly  (web.backend)",
        "extract  local  (web.backend 'searchonly' cannot extract pages: the first of the "
        "available backends that can (local, broken, fakesearch, offline, original, paid); "
        "web.extract_backend chooses another)"]
    data = json.loads(hermes(capsys, "web", "status", "--json")[1])
    assert data["selected"]["extract"]["backend"] == "local"
    assert data["selected"]["extract"]["key"] == "web.backend"
    page = web.page("a", "Page A\nhello")
    code, out, _ = hermes(capsys, "web", "extract", page)
    assert code == 0 and "(local, " in out.splitlines()[0] and "hello" in out

"""docs/web.md's Backends section against the backends: their variables, options and the
HTTP settings are all documented."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hermes_agent.kits.http.client import HTTP_SETTINGS

from .support import CASES, Case

DOC = (Path(__file__).resolve().parents[2] / "docs" / "web.md").read_text(encoding="utf-8")
OPTIONS = {
    "searxng": ["categories", "language", "pageno", "time_range", "safesearch"],
    "brave": ["offset", "freshness", "country", "search_lang", "safesearch"],
    "tavily": ["search_depth", "topic", "time_range", "days", "include_domains",
               "exclude_domains", "country", "include_answer", "extract_depth"],
    "exa": ["type", "contents", "category", "include_domains", "exclude_domains",
            "start_published_date", "end_published_date"],
}


def backend_section(name: str) -> str:
    start = DOC.index(f"(`{name}`)\n")
    end = DOC.find("\n### ", start)
    return DOC[start:end]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_each_backend_documents_its_variables_and_options(case: Case) -> None:
    text = backend_section(case.name)
    documented_env = set(re.findall(r"`([A-Z][A-Z_]+)`", DOC))
    assert set(case.backend({}).env_vars) <= documented_env
    assert (case.key_env or case.url_env) in text
    for option in OPTIONS[case.name]:
        assert f"`{option}`" in text, (case.name, option)
    schema_url = case.backend({}).get_config_schema()[0].get("url", "")
    assert schema_url.split("/")[2] in text  # where to get the key (or run the server)


def test_the_http_settings_are_in_the_example() -> None:
    example = DOC.split("## Backends", 1)[1].split("```yaml", 1)[1].split("```", 1)[0]
    assert set(HTTP_SETTINGS) <= set(re.findall(r"^      (\w+):", example, re.M))

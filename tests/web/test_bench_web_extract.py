"""benchmarks/bench_web_extract.py measures the web_extract tool for real: its kernel selects
the local backend, reaches the 127.0.0.1 page server and caches nothing, so every call reads
the page (a "not_configured" answer or a cached one would make the overhead meaningless)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from hermes_agent.testing.fake_web import FakePageServer

pytest.importorskip("trafilatura", reason="the local extractor's library is not installed: "
                                          "pip install 'hermes-agent-runtime[web-local]'")
BENCH = Path(__file__).parents[2] / "benchmarks" / "bench_web_extract.py"


def bench() -> ModuleType:
    sys.path.insert(0, str(BENCH.parent))
    try:
        spec = importlib.util.spec_from_file_location("bench_web_extract", BENCH)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(BENCH.parent))


def test_the_tool_runner_reads_the_page_with_local_every_time(tmp_path: Path) -> None:
    module = bench()
    run = module.tool_runner(module.bench_kernel(tmp_path / "home"))
    html = module.make_page(58_000, seed=0, kind=module.KINDS[0])
    with FakePageServer() as site:
        site.page("/news", html)
        first, second = run(site.url + "/news"), run(site.url + "/news")
        fetched = [r.path for r in site.requests]
    for result in (first, second):
        [page] = result["results"]
        assert result["backend"] == "local" and page["status"] == "ok" and "cached" not in page
        assert len(page["content"]) > 1000 and "note" not in page  # whole, not summarised
    assert fetched == ["/news", "/news"]


def test_the_tool_runner_fails_loudly_when_the_tool_does(tmp_path: Path) -> None:
    module = bench()
    run = module.tool_runner(module.bench_kernel(tmp_path / "home"))
    with FakePageServer() as site, pytest.raises(AssertionError):
        run(site.url + "/missing")

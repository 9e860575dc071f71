"""Local page extraction: pages per second, peak memory, and what the backend adds to the bare
trafilatura conversion.

Run with our interpreter (the web-local extra installed)::

    .venv/bin/python benchmarks/bench_web_extract.py [--rounds 5] [--json out.json]

Fifteen generated pages of 50-500 KB (news, docs and blog layouts with navigation, banners,
ads, sidebars, tables, code, comments, inline scripts and styles; ``_web_pages.py``) are served
by the fake web site on 127.0.0.1. Each round, interleaved page by page, times:

- **bare**: ``trafilatura.extract`` of the page's HTML string (the floor);
- **fetch**: the SSRF-safe ``fetch`` of the page alone (check, pinned connection, capped read);
- **backend**: the ``local`` backend's ``extract([url])`` (fetch + conversion + title + links);
- **batch**: one ``extract`` of all fifteen URLs (four pages at a time), once per round;
- **tool**: the ``web_extract`` tool on the page (selection, URL check, the time-capped call,
  injection scan, untrusted marking, JSON), with the per-session cache off
  (``web.cache_entries: 0``) so every call fetches, and ``web.extract_char_limit`` above the
  largest page so no summary model is asked (there is none here).

Overhead = backend - bare, per page; tool overhead = tool - backend (medians over rounds).
Peak memory: ``tracemalloc`` peak of one backend extract of the largest page (Python objects
only: lxml's C memory is not traced), and the process's ``ru_maxrss`` before the first
extraction and at the end (everything). Every backend and tool call is checked to have read
its page.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from _web_pages import KINDS, make_page  # noqa: E402

from hermes_agent.api import ToolCallContext  # noqa: E402
from hermes_agent.kits.http import fetch
from hermes_agent.testing import make_kernel  # noqa: E402
from hermes_agent.testing.fake_web import FakePageServer  # noqa: E402

SIZES = (58_000, 130_000, 260_000, 420_000, 640_000)  # nominal; served pages are 50-500 KB
BARE_OPTIONS = dict(output_format="markdown", include_links=True, include_tables=True,
                    include_formatting=True, include_comments=False, include_images=False)


#: the local backend for extraction, the 127.0.0.1 page server allowed, no cache, no summary
WEB = {"extract_backend": "local", "allow_private_networks": True, "cache_entries": 0,
       "extract_char_limit": 10_000_000}


def bench_kernel(home: Path) -> Any:
    return make_kernel(home, builtins=True, config={"web": WEB})


def tool_runner(kernel: Any) -> Callable[[str], dict[str, Any]]:
    """A callable running the ``web_extract`` tool on one URL; AssertionError unless the
    local backend read the page (not from a cache)."""
    context = ToolCallContext(session_id="bench")

    def run(url: str) -> dict[str, Any]:
        result = json.loads(kernel.tools.dispatch("web_extract", {"urls": [url]},
                                                  context=context))
        pages = result.get("results") or [{}]
        assert result.get("success") and result.get("backend") == "local", result
        assert pages[0].get("status") == "ok" and not pages[0].get("cached"), pages[0]
        return result

    return run


def timed(call: Callable[[], Any]) -> float:
    started = time.perf_counter()
    call()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    import trafilatura

    home = Path(tempfile.mkdtemp(prefix="hermes-bench-web-"))
    kernel = bench_kernel(home)
    backend = kernel.slots.get("web_search", "local")
    run_tool = tool_runner(kernel)
    pages = {f"/{kind}/{size}": make_page(size, seed=i, kind=kind)
             for i, (size, kind) in enumerate((s, k) for s in SIZES for k in KINDS)}
    times: dict[str, dict[str, list[float]]] = {p: {"bare": [], "fetch": [], "backend": [],
                                                    "tool": []} for p in pages}
    batch: list[float] = []
    rss_before = _max_rss_mb()  # libraries imported, pages built: what extraction adds is after
    with FakePageServer() as site:
        for path, html in pages.items():
            site.page(path, html)
        urls = {path: site.url + path for path in pages}
        for path in pages:  # warm-up: imports, first connections, the scan's first use
            backend.extract([urls[path]])
            run_tool(urls[path])
        for _ in range(args.rounds):
            for path, html in pages.items():
                url = urls[path]
                times[path]["bare"].append(timed(lambda: trafilatura.extract(
                    html, url=url, **BARE_OPTIONS)))
                times[path]["fetch"].append(timed(lambda: fetch(url, allow_private=True)))
                times[path]["backend"].append(timed(lambda: _read(backend, url)))
                times[path]["tool"].append(timed(lambda: run_tool(url)))
            batch.append(timed(lambda: _read(backend, *urls.values())))
        largest = max(pages, key=lambda p: len(pages[p]))
        tracemalloc.start()
        backend.extract([urls[largest]])
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    report(pages, times, batch, peak, rss_before, args.json)


def _read(backend: Any, *urls: str) -> None:
    pages = backend.extract(list(urls))
    assert len(pages) == len(urls) and all(p.status == "ok" for p in pages), pages


def _max_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def report(pages: dict[str, str], times: dict[str, dict[str, list[float]]], batch: list[float],
           peak: int, rss_before: float, out: Path | None) -> None:
    med = {p: {k: statistics.median(v) if v else None for k, v in t.items()}
           for p, t in times.items()}
    print(f"{'page':<14}{'KB':>6}{'bare ms':>10}{'fetch ms':>10}{'backend ms':>12}"
          f"{'overhead ms':>13}{'tool ms':>10}")
    for path, m in med.items():
        tool = f"{m['tool'] * 1000:10.1f}"
        print(f"{path:<14}{len(pages[path]) / 1000:6.0f}{m['bare'] * 1000:10.1f}"
              f"{m['fetch'] * 1000:10.1f}{m['backend'] * 1000:12.1f}"
              f"{(m['backend'] - m['bare']) * 1000:13.1f}{tool}")
    n = len(pages)
    total = {k: sum(m[k] for m in med.values()) for k in ("bare", "fetch", "backend", "tool")}
    overhead = (total["backend"] - total["bare"]) / n
    summary = {
        "pages": n, "kb_total": round(sum(map(len, pages.values())) / 1000),
        "bare_pages_per_s": round(n / total["bare"], 2),
        "backend_pages_per_s": round(n / total["backend"], 2),
        "batch_pages_per_s": round(n / statistics.median(batch), 2),
        "overhead_ms_per_page": round(overhead * 1000, 1),
        "overhead_pct": round(100 * (total["backend"] / total["bare"] - 1), 1),
        "fetch_ms_per_page": round(total["fetch"] / n * 1000, 1),
        "peak_tracemalloc_mb_largest_page": round(peak / 2**20, 1),
        "ru_maxrss_mb_before_extraction": round(rss_before, 1),
        "ru_maxrss_mb_after": round(_max_rss_mb(), 1),
        "tool_pages_per_s": round(n / total["tool"], 2),
        "tool_overhead_ms_per_page": round((total["tool"] - total["backend"]) / n * 1000, 1),
        "tool_overhead_pct": round(100 * (total["tool"] / total["backend"] - 1), 1),
    }
    print()
    for key, value in summary.items():
        print(f"{key:<36}{value}")
    if out:
        out.write_text(json.dumps({"summary": summary, "medians": med}, indent=2))


if __name__ == "__main__":
    main()

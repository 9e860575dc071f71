"""What the web tools add over the bare backend call.

Run with our interpreter::

    .venv/bin/python benchmarks/bench_web_tools.py [--calls 300]

A backend that answers at once from memory (10 search results; a page of 12,000 characters,
a little different for each URL so the injection scan's memo never answers)
is registered in a kernel with the builtin plugins; each sample times the bare backend
call, then the same work through ``kernel.tools.dispatch`` (settings read, selection, the
time-capped call on its own thread, the injection scan of every snippet or of the page, the
untrusted marking, the JSON result), with the cache off so every call reaches the backend,
and a repeated call answered from the cache. The page fits in ``web.extract_char_limit``, so
no model is called. Target: under 5 ms per call (p95) over the bare call. Stdlib only,
besides our package.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from typing import Any

from hermes_agent.api import ToolCallContext, WebBackend, WebPage, WebResult
from hermes_agent.testing import make_kernel

PARAGRAPH = ("The tower was finished in 1889 for the World's Fair and is 330 metres tall "
             "including its antennas. It was the tallest structure in the world until 1930. ")
PAGE = "# The tower\n\n" + "\n\n".join(PARAGRAPH for _ in range(75))


class InMemory(WebBackend):
    name = "memory"

    def is_available(self) -> bool:
        return True

    def search(self, query: str, limit: int = 5, **options: Any) -> list[WebResult]:
        return [WebResult(f"{query} {i}", f"https://example.org/{i}", PARAGRAPH, source="memory")
                for i in range(limit)]

    def extract(self, urls: list[str], **options: Any) -> list[WebPage]:
        return [WebPage(url, "The tower", f"{PAGE}\n\nSource: {url}") for url in urls]


def timed(fn: Callable[[int], Any], calls: int) -> list[float]:
    samples = []
    for i in range(calls):
        started = time.perf_counter()
        fn(i)
        samples.append((time.perf_counter() - started) * 1000)
    return sorted(samples)


def report(label: str, samples: list[float]) -> float:
    p95 = samples[int(len(samples) * 0.95) - 1]
    print(f"  {label:<28} p50 {statistics.median(samples):7.3f} ms   p95 {p95:7.3f} ms")
    return p95


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300)
    calls = parser.parse_args().calls
    backend = InMemory()
    config = {"web": {"backend": "memory", "cache_entries": 0, "allow_private_networks": True,
                      "extract_char_limit": len(PAGE) + 100}}
    kernel = make_kernel(tempfile.mkdtemp(prefix="bench-web-"), config=config, builtins=True,
                         plugins=[lambda ctx: ctx.register_web_search_provider(backend)])
    cached = make_kernel(tempfile.mkdtemp(prefix="bench-web-"), builtins=True,
                         config={"web": {**config["web"], "cache_entries": 256}},
                         plugins=[lambda ctx: ctx.register_web_search_provider(backend)])
    context = ToolCallContext(session_id="bench")
    url = "http://127.0.0.1/page"

    def tool(k: Any, name: str, args: dict[str, Any]) -> str:
        result = k.tools.dispatch(name, args, context=context)
        assert '"success": true' in result, result[:300]
        return result

    tool(kernel, "web_search", {"query": "warm up"})  # imports, the scan's first use
    tool(cached, "web_search", {"query": "tower"})
    tool(cached, "web_extract", {"urls": [url]})
    print(f"web tools over an in-memory backend, {calls} calls each")
    bare_search = report("bare search (10 results)", timed(lambda i: backend.search(f"q{i}", 10), calls))
    tool_search = report("web_search", timed(lambda i: tool(kernel, "web_search",
                                                            {"query": f"q{i}", "limit": 10}), calls))
    report("web_search, cached", timed(lambda i: tool(cached, "web_search", {"query": "tower"}), calls))
    bare_page = report("bare extract (12k chars)", timed(lambda i: backend.extract([url]), calls))
    tool_page = report("web_extract", timed(lambda i: tool(kernel, "web_extract",
                                                           {"urls": [f"{url}?{i}"]}), calls))
    report("web_extract, cached", timed(lambda i: tool(cached, "web_extract", {"urls": [url]}), calls))
    print(f"overhead p95: search {tool_search - bare_search:.3f} ms, extract "
          f"{tool_page - bare_page:.3f} ms (target < 5 ms)")


if __name__ == "__main__":
    main()

"""What an MCP tool call through hermes adds over a direct call with the SDK.

Run with our interpreter (the ``mcp`` extra installed)::

    .venv/bin/python benchmarks/bench_mcp.py [--calls 300] [--rounds 3] [--json FILE]

Two copies of one small stdio server (written by this script with the same SDK, its
``echo`` tool answering at once) are started: one held by a bare ``ClientSession`` on its own
event loop, timed inside the coroutine (``await session.call_tool``: the floor); the other
configured under ``mcp_servers`` in a kernel with the builtin plugins, timed through
``kernel.tools.dispatch("mcp__bench__echo", ...)`` from the caller's thread (the hop to the
MCP loop thread, the wait with its timeout, the result as text between untrusted markers,
the JSON). The rounds alternate which side goes first. Target: under 2 ms p50 overhead.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from hermes_agent.api import ToolCallContext
from hermes_agent.testing import make_kernel

SERVER = '''
from mcp.server.mcpserver import MCPServer
app = MCPServer("bench")

@app.tool()
def echo(text: str) -> str:
    """Repeat the text."""
    return text

app.run()
'''
TARGET_MS = 2.0


def percentile(samples: list[float], share: float) -> float:
    ordered = sorted(samples)
    return ordered[max(0, int(len(ordered) * share) - 1)]


async def direct_calls(script: Path, calls: int, rounds: int) -> list[list[float]]:
    from mcp import ClientSession, StdioServerParameters, stdio_client

    params = StdioServerParameters(command=sys.executable, args=[str(script)])
    found: list[list[float]] = []
    async with stdio_client(params) as streams, ClientSession(streams[0], streams[1]) as session:
        await session.initialize()
        await session.call_tool("echo", {"text": "warm up"})
        for _ in range(rounds):
            samples = []
            for i in range(calls):
                started = time.perf_counter()
                await session.call_tool("echo", {"text": f"call {i}"})
                samples.append((time.perf_counter() - started) * 1000)
            found.append(samples)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", dest="json_path", default="")
    options = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-mcp-"))
    script = work / "echo_server.py"
    script.write_text(SERVER)
    kernel = make_kernel(work / "home", builtins=True, config={"mcp_servers": {"bench": {
        "command": sys.executable, "args": [str(script)]}}})
    kernel.service("mcp").refresh()  # starts the server, registers its tools
    context = ToolCallContext(session_id="bench")

    def ours(round_calls: int) -> list[float]:
        samples = []
        for i in range(round_calls):
            started = time.perf_counter()
            result = kernel.tools.dispatch("mcp__bench__echo", {"text": f"call {i}"},
                                           context=context)
            samples.append((time.perf_counter() - started) * 1000)
            assert f"call {i}" in result, result
        return samples

    ours(20)  # warm up
    direct: list[float] = []
    through: list[float] = []
    for index in range(options.rounds):  # alternate which side goes first
        if index % 2:
            through += ours(options.calls)
        direct += asyncio.run(direct_calls(script, options.calls, 1))[0]
        if not index % 2:
            through += ours(options.calls)
    kernel.close()
    figures = {side: {"p50_ms": statistics.median(s), "p95_ms": percentile(s, 0.95),
                      "calls": len(s)} for side, s in (("direct_sdk", direct), ("hermes", through))}
    overhead = figures["hermes"]["p50_ms"] - figures["direct_sdk"]["p50_ms"]
    figures["overhead_p50_ms"] = overhead
    figures["overhead_p95_ms"] = figures["hermes"]["p95_ms"] - figures["direct_sdk"]["p95_ms"]
    figures["target_p50_ms"] = TARGET_MS
    print(f"MCP tool call over stdio, {options.rounds} rounds x {options.calls} calls each side")
    for side in ("direct_sdk", "hermes"):
        print(f"  {side:<12} p50 {figures[side]['p50_ms']:7.3f} ms   "
              f"p95 {figures[side]['p95_ms']:7.3f} ms")
    print(f"  overhead     p50 {overhead:7.3f} ms   p95 {figures['overhead_p95_ms']:7.3f} ms   "
          f"(target p50 < {TARGET_MS:g} ms: {'PASS' if overhead < TARGET_MS else 'FAIL'})")
    if options.json_path:
        Path(options.json_path).write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()

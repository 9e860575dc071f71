"""The browser tools: latency per action on a local page, and what the browser plugin adds to
``chat -q`` when the ``browser`` extra is installed but no browser tool runs.

Run with our interpreter (the ``browser`` extra and Debian's ``chromium`` installed)::

    .venv/bin/python benchmarks/bench_browser.py [--rounds 20] [--chats 6] [--json FILE]

Actions: a kernel with the builtin plugins drives the real Chromium through
``kernel.tools.dispatch`` against a site served on 127.0.0.1 (a form page and its result),
each action timed from the caller's thread (the hop to the browser's loop thread, the SSRF
check of every request, the snapshot script, the JSON); the first call, which starts
Chromium, is reported on its own. Start-up: ``hermes chat -q`` against the fake model, with
the browser plugin loaded and with it disabled (``plugins.disabled: [browser]``),
interleaved; and the modules a ``chat -q`` imports (no ``playwright`` may be among them).
Target: no added start-up cost (the difference within the run-to-run noise) and no
Playwright import.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from hermes_agent.testing import make_kernel
from hermes_agent.testing.fake_llm import FakeLLMServer, reply_text

BENCH = Path(__file__).resolve().parent
FORM = (b"<!doctype html><title>Form</title><h1>Order</h1><p>Pick a size.</p>"
        b"<form action=/done method=get><input name=who placeholder=Name>"
        b"<button type=submit>Send</button></form><img src=/x.png alt=x>"
        b"<script>console.log('ready')</script>")
DONE = b"<!doctype html><title>Done</title><p>Thanks.</p>"


class Handler(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        return None

    def do_GET(self) -> None:  # noqa: N802
        body = DONE if self.path.startswith("/done") else FORM
        self.send_response(200 if not self.path.startswith("/x.png") else 404)
        self.send_header("content-type", "text/html")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered)) - 1))]


def stats_ms(values: list[float]) -> dict[str, float]:
    return {"median_ms": statistics.median(values) * 1000, "p95_ms": pct(values, 0.95) * 1000,
            "n": len(values)}


def actions(rounds: int) -> dict[str, Any]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/form"
    home = Path(tempfile.mkdtemp(prefix="hermes-bench-browser-"))
    kernel = make_kernel(home, config={"browser": {"allowed_hosts": ["127.0.0.1"]}},
                         env={"HERMES_HOME": str(home)}, builtins=True)
    steps = [("browser_navigate", {"url": url}), ("browser_snapshot", {}),
             ("browser_type", {"ref": "@e1", "text": "Ada"}), ("browser_click", {"ref": "@e2"}),
             ("browser_back", {}), ("browser_scroll", {"direction": "down"}),
             ("browser_press", {"key": "Tab"}), ("browser_get_images", {}),
             ("browser_console", {"clear": True})]
    times: dict[str, list[float]] = {name: [] for name, _ in steps}

    def call(name: str, args: dict[str, Any]) -> float:
        started = time.perf_counter()
        answer = json.loads(kernel.tools.dispatch(name, args, session_id="bench"))
        elapsed = time.perf_counter() - started
        if not answer.get("success"):
            raise RuntimeError(f"{name} failed: {answer}")
        return elapsed

    try:
        first = call("browser_navigate", {"url": url})  # starts Chromium
        for _ in range(rounds):
            for name, args in steps:
                times[name].append(call(name, args))
    finally:
        kernel.close()
        server.shutdown()
    return {"first_navigate_ms": first * 1000,
            "actions": {name: stats_ms(values) for name, values in times.items()}}


def chat_homes(root: Path, base_url: str) -> dict[str, dict[str, str]]:
    envs = {}
    for side, extra in (("loaded", ""), ("disabled", "plugins:\n  disabled: [browser]\n")):
        home = root / side
        home.mkdir(parents=True)
        (home / "config.yaml").write_text(
            f"model:\n  provider: custom\n  base_url: {base_url}\n  default: fake-model\n"
            f"  max_retries: 0\nsessions:\n  auto_title: false\n{extra}")
        envs[side] = {**{k: v for k, v in os.environ.items()
                         if not k.startswith(("HERMES_", "OPENAI_"))},
                      "HERMES_HOME": str(home), "NO_PROXY": "127.0.0.1,localhost"}
    return envs


def start_up(chats: int) -> dict[str, Any]:
    hermes = str(Path(sys.executable).parent / "hermes")
    times: dict[str, list[float]] = {"loaded": [], "disabled": []}
    with FakeLLMServer() as server, tempfile.TemporaryDirectory() as tmp:
        envs = chat_homes(Path(tmp), server.openai_base_url)
        for rep in range(chats + 1):
            for side in (list(times) if rep % 2 else list(times)[::-1]):
                server.script(reply_text("pong"))
                started = time.perf_counter()
                proc = subprocess.run([hermes, "chat", "-q", "ping"], env=envs[side], cwd=tmp,
                                      capture_output=True, text=True, stdin=subprocess.DEVNULL,
                                      timeout=300)
                elapsed = time.perf_counter() - started
                if proc.returncode or "pong" not in proc.stdout:
                    raise RuntimeError(f"chat -q failed: {proc.stdout[-300:]} {proc.stderr[-800:]}")
                if rep:
                    times[side].append(elapsed)
        server.script(reply_text("pong"))
        out = Path(tmp) / "modules.json"
        subprocess.run([sys.executable, str(BENCH / "_modules_probe.py"), str(out),
                        "hermes_agent.cli.root:main", "chat", "-q", "ping"], env=envs["loaded"],
                       cwd=tmp, capture_output=True, text=True, stdin=subprocess.DEVNULL,
                       timeout=300, check=True)
        modules = json.loads(out.read_text())
        if isinstance(modules, dict):
            modules = modules.get("modules", [])
    loaded, disabled = stats_ms(times["loaded"]), stats_ms(times["disabled"])
    return {"loaded": loaded, "disabled": disabled,
            "added_median_ms": loaded["median_ms"] - disabled["median_ms"],
            "playwright_modules": [m for m in modules if m.split(".")[0] == "playwright"],
            "plugin_modules": [m for m in modules if ".builtin_plugins.browser" in m]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--chats", type=int, default=6)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    result = {"actions": actions(args.rounds), "start_up": start_up(args.chats)}
    acts, boot = result["actions"], result["start_up"]
    print(f"first browser_navigate (starts Chromium): {acts['first_navigate_ms']:.0f} ms")
    print("| action | median ms | p95 ms |\n|---|---|---|")
    for name, row in acts["actions"].items():
        print(f"| {name} | {row['median_ms']:.1f} | {row['p95_ms']:.1f} |")
    print("| chat -q | median ms | p95 ms |\n|---|---|---|")
    for side in ("loaded", "disabled"):
        row = boot[side]
        print(f"| browser plugin {side} | {row['median_ms']:.0f} | {row['p95_ms']:.0f} |")
    print(f"added by the browser plugin (median): {boot['added_median_ms']:+.0f} ms; "
          f"playwright modules imported by chat -q: {len(boot['playwright_modules'])}; "
          f"plugin modules: {len(boot['plugin_modules'])}")
    print("target (no playwright import at start-up): "
          + ("met" if not boot["playwright_modules"] else "MISSED"))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

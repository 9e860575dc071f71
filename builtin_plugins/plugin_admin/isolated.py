"""`hermes plugins doctor --isolated`: diagnose in a child process, so that even a plugin
that ends the process while loading (``os._exit``, a crash in native code) is named.

The child is ``hermes plugins doctor --json`` with ``HERMES_LOAD_TRAIL`` set: the kernel
writes each plugin's name there before loading it. A child that dies without printing its
report was killed by the last plugin on that trail; the child runs again without it
(through ``HERMES_LOAD_PLUGINS``), and that plugin is reported as ``process_exit``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import click

from hermes_agent import Kernel, load_filter

from .doctor import Reason, Report

MAX_CULPRITS = 8


def isolated_diagnose(kernel: Kernel, name: str | None,
                      include_builtin: bool) -> tuple[list[Report], list[Reason]]:
    args = [sys.executable, "-m", "hermes_agent.cli.root", "plugins", "doctor", "--load", "--json",
            *(["--all"] if include_builtin else []), *([name] if name else [])]
    wanted = load_filter(kernel.env)
    others = {r.name for r in kernel.discover().plugins.values() if r.source != "builtin"}
    culprits: dict[str, int] = {}
    with tempfile.TemporaryDirectory(prefix="hermes-doctor-") as tmp:
        trail = Path(tmp) / "trail"
        while True:
            env = {**os.environ, **kernel.env, "HERMES_LOAD_TRAIL": str(trail)}
            if culprits:
                allowed = (wanted if wanted is not None else others) - set(culprits)
                env["HERMES_LOAD_PLUGINS"] = ",".join(sorted(allowed))
            trail.unlink(missing_ok=True)
            child = subprocess.run(args, env=env, capture_output=True, text=True)
            try:
                data = json.loads(child.stdout)
                break
            except ValueError:
                loaded = trail.read_text(encoding="utf-8").split() if trail.exists() else []
                if not loaded or loaded[-1] in culprits or len(culprits) >= MAX_CULPRITS:
                    raise click.ClickException(
                        f"the diagnosing process ended with status {child.returncode} without "
                        f"a report: {(child.stderr.strip().splitlines() or [''])[-1]}") from None
                culprits[loaded[-1]] = child.returncode
    reports = [_report(entry) for entry in data["plugins"]]
    for report in reports:
        if report.name in culprits:
            _blame(report, culprits[report.name], restricted=wanted is not None)
    return reports, [Reason(**problem) for problem in data["problems"]]


def _report(entry: dict[str, Any]) -> Report:
    reasons = [Reason(**reason) for reason in entry.pop("reasons")]
    return Report(**entry, reasons=reasons)


def _blame(report: Report, status: int, restricted: bool) -> None:
    """``report`` came from a child that skipped this plugin: make it say why."""
    report.state, report.active = "failed", False
    kept = [r for r in report.reasons if r.code != "load_filter" or restricted]
    report.reasons = [Reason("process_exit", f"loading it ended the hermes process (exit status "
                             f"{status}) before anything could be reported: its code calls "
                             "os._exit() or crashes the interpreter",
                             f"update or fix the plugin, or disable it: hermes plugins disable "
                             f"{report.name}"), *kept]

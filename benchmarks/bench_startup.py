#!/usr/bin/env python3
"""Startup and hook-dispatch benchmark: our hermes vs hermes-agent 0.19.0.

Measures both implementations side by side in ONE run, interleaving them to
spread machine noise evenly, and prints medians, minimums and ratios
(ours / original). See benchmarks/README.md for what is measured and why.

    python benchmarks/bench_startup.py --json /tmp/bench.json

Stdlib only. The environments it needs (a virtualenv with the original from
PyPI, and one with our package built from this repo) are created on first use
and cached under --workdir.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
DEFAULT_REPO = BENCH_DIR.parent
ORIGINAL_REQUIREMENT = "hermes-agent==0.19.0"
ORIGINAL_VERSION = "0.19.0"
OUR_IMPORT_NAME = "hermes_agent"

PLUGIN_COUNT = 50
ENABLED_COUNT = 25
HEAVY_MODULES = ("openai", "anthropic", "pydantic", "pluggy")
FORBIDDEN_FOR_OURS = ("openai", "anthropic")  # plus any plugin code
IMPORT_CHECK_COMMANDS = ("help", "plugins_list_50")
IMPORT_LOG_ENV = "HERMES_BENCH_IMPORT_LOG"
# Any proxied HTTP(S) request fails at once instead of reaching the network.
DEAD_PROXY = "http://127.0.0.1:9"
RUN_TIMEOUT_S = 120.0


# --------------------------------------------------------------------------
# What is measured
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class StartupCase:
    key: str
    label: str
    args: tuple[str, ...]  # CLI arguments; empty means `python -c pass`
    home: str  # which home template: "empty" or "plugins50"
    target: float | None  # ours/original median ratio must stay under this


STARTUP_CASES: tuple[StartupCase, ...] = (
    StartupCase("python_floor", "python -c pass (interpreter floor)", (), "empty", None),
    StartupCase("version", "hermes --version", ("--version",), "empty", 1 / 3),
    StartupCase("help", "hermes --help", ("--help",), "empty", 1 / 3),
    StartupCase(
        "plugins_list_50",
        f"hermes plugins list ({PLUGIN_COUNT} plugins, {ENABLED_COUNT} enabled)",
        ("plugins", "list"),
        "plugins50",
        0.40,
    ),
    StartupCase("plugins_list_empty", "hermes plugins list (empty home)", ("plugins", "list"), "empty", 0.40),
)
CASES_BY_KEY = {case.key: case for case in STARTUP_CASES}


@dataclass
class Impl:
    """One implementation under test."""

    key: str  # "ours" or "original"
    python: Path
    hermes: list[str]  # argv prefix that runs the `hermes` CLI
    entry_point: str  # "module:function" of the `hermes` console script
    hook_script: Path
    version: str
    homes: dict[str, Path] = field(default_factory=dict)  # template name -> copy


@dataclass
class Sample:
    wall_s: float
    cpu_s: float


# --------------------------------------------------------------------------
# Small process helpers
# --------------------------------------------------------------------------


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def run_checked(cmd: Sequence[str | Path], log_file: Path | None = None) -> bool:
    """Run a setup command; on failure print where its output went."""
    argv = [str(part) for part in cmd]
    if log_file is None:
        return subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False).returncode == 0
    with log_file.open("a", encoding="utf-8") as handle:
        handle.write(f"\n$ {' '.join(argv)}\n")
        handle.flush()
        code = subprocess.run(argv, stdout=handle, stderr=subprocess.STDOUT, check=False).returncode
    if code != 0:
        tail = log_file.read_text(encoding="utf-8", errors="replace").splitlines()[-15:]
        log(f"  command failed ({code}): {' '.join(argv)}\n  see {log_file}; last lines:")
        for line in tail:
            log(f"    {line}")
    return code == 0


def python_query(python: Path, code: str, *args: str, cwd: Path) -> str | None:
    """Run a `-c` snippet with *python*; return its stripped stdout or None."""
    proc = subprocess.run(
        [str(python), "-c", code, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=base_env(),
        timeout=RUN_TIMEOUT_S,
        check=False,
    )
    return proc.stdout.strip() if proc.returncode == 0 else None


def base_env() -> dict[str, str]:
    """A minimal, deterministic environment (no API keys, no PYTHON* vars)."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TERM": "xterm",
        "COLUMNS": "120",
        "LINES": "50",
    }
    for name in ("http_proxy", "https_proxy", "all_proxy"):
        env[name] = env[name.upper()] = DEAD_PROXY
    if "TMPDIR" in os.environ:
        env["TMPDIR"] = os.environ["TMPDIR"]
    return env


def impl_env(home: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    env = base_env()
    env["HOME"] = str(home / "user-home")
    env["HERMES_HOME"] = str(home / "hermes-home")
    env.update(extra or {})
    return env


# --------------------------------------------------------------------------
# Environment setup (cached under --workdir)
# --------------------------------------------------------------------------


ENTRY_POINT_QUERY = """
import importlib.metadata as md, sys
eps = [ep for ep in md.entry_points(group="console_scripts") if ep.name == "hermes"]
eps.sort(key=lambda ep: not ep.value.startswith(sys.argv[1]))
print(eps[0].value if eps else "")
"""

VERSION_QUERY = """
import importlib.metadata as md, sys
dists = md.packages_distributions().get(sys.argv[1], [])
print(" ".join(f"{name} {md.version(name)}" for name in dists) or "unknown")
"""


def ensure_venv(venv: Path, base_python: str, log_file: Path) -> Path | None:
    python = venv / "bin" / "python"
    if not python.exists():
        log(f"[setup] creating virtualenv {venv}")
        if not run_checked([base_python, "-m", "venv", str(venv)], log_file):
            return None
    return python


def pip(python: Path, *args: str) -> list[str]:
    return [str(python), "-m", "pip", "--disable-pip-version-check", "-q", *args]


def setup_original(workdir: Path, base_python: str) -> Path | None:
    venv = workdir / "venv-original"
    marker = venv / ".bench-installed"
    log_file = workdir / "setup-original.log"
    python = ensure_venv(venv, base_python, log_file)
    if python is None:
        return None
    if marker.exists() and marker.read_text().strip() == ORIGINAL_REQUIREMENT:
        return python
    log(f"[setup] pip install {ORIGINAL_REQUIREMENT} into {venv} (log: {log_file})")
    if not run_checked(pip(python, "install", ORIGINAL_REQUIREMENT), log_file):
        return None
    marker.write_text(ORIGINAL_REQUIREMENT + "\n")
    return python


def setup_ours(workdir: Path, base_python: str, repo: Path) -> Path | None:
    """Install our package non-editable from *repo* into a cached venv.

    Dependencies are resolved once per venv; our own package is rebuilt and
    force-reinstalled on every run so the numbers reflect the current tree.
    """
    venv = workdir / "venv-ours"
    log_file = workdir / "setup-ours.log"
    python = ensure_venv(venv, base_python, log_file)
    if python is None:
        return None
    log(f"[setup] pip install {repo} into {venv} (log: {log_file})")
    if not run_checked(pip(python, "install", str(repo)), log_file):
        return None
    if not run_checked(pip(python, "install", "--no-deps", "--force-reinstall", str(repo)), log_file):
        return None
    return python


def make_impl(key: str, python: Path, import_name: str, hook_script: Path, cwd: Path) -> Impl | str:
    """Describe an installed implementation, or return why it is unusable."""
    real = python_query(python, "import sys; print(sys.executable)", cwd=cwd)
    if real is None:
        return f"{python} does not run"
    python = Path(real)  # e.g. resolves a pyenv shim to the real interpreter
    if python_query(python, f"import {import_name}", cwd=cwd) is None:
        return f"`{import_name}` is not importable with {python}"
    entry_point = python_query(python, ENTRY_POINT_QUERY, import_name, cwd=cwd)
    if not entry_point:
        return f"no `hermes` console script is installed for {python}"
    script = python.parent / "hermes"
    if script.exists():
        hermes = [str(script)]
    else:  # same thing the console script does
        module, _, func = entry_point.partition(":")
        wrapper = f"import sys; sys.argv[0] = 'hermes'; from {module} import {func}; sys.exit({func}())"
        hermes = [str(python), "-c", wrapper]
    version = python_query(python, VERSION_QUERY, import_name, cwd=cwd) or "unknown"
    return Impl(key, python, hermes, entry_point, hook_script, version)


# --------------------------------------------------------------------------
# Home layouts (identical for both implementations)
# --------------------------------------------------------------------------


PLUGIN_INIT = '''"""Benchmark plugin {nn} (generated by benchmarks/bench_startup.py)."""

import os

_log = os.environ.get("{log_env}")
if _log:  # lets the benchmark detect that plugin code was imported
    with open(_log, "a", encoding="utf-8") as _fh:
        _fh.write(__name__ + "\\n")

SCHEMA = {{
    "name": "bench_tool_{nn}",
    "description": "Benchmark tool {nn}: echoes its input.",
    "parameters": {{
        "type": "object",
        "properties": {{"text": {{"type": "string", "description": "Text to echo."}}}},
        "required": ["text"],
    }},
}}


def _handle(args, **kwargs):
    return '{{"echo": %r}}' % (args.get("text", ""),)


def register(ctx):
    ctx.register_tool(name="bench_tool_{nn}", toolset="bench", schema=SCHEMA, handler=_handle)
'''

PLUGIN_YAML = """name: bench_plugin_{nn}
version: 1.0.{n}
description: Benchmark plugin {nn}, provides one tool
provides_tools:
  - bench_tool_{nn}
"""


def seed_update_cache(hermes_home: Path) -> None:
    """Pre-seed the original's 6-hour PyPI update-check cache (see README)."""
    payload = {"ts": time.time(), "behind": 0, "rev": None, "ver": ORIGINAL_VERSION}
    (hermes_home / ".update_check").write_text(json.dumps(payload))


def build_home_templates(root: Path) -> dict[str, Path]:
    templates: dict[str, Path] = {}
    for name in ("empty", "plugins50"):
        home = root / name
        (home / "user-home").mkdir(parents=True)
        (home / "hermes-home").mkdir()
        seed_update_cache(home / "hermes-home")
        templates[name] = home

    hermes_home = templates["plugins50"] / "hermes-home"
    for n in range(1, PLUGIN_COUNT + 1):
        nn = f"{n:02d}"
        plugin_dir = hermes_home / "plugins" / f"bench_plugin_{nn}"
        plugin_dir.mkdir(parents=True)
        (plugin_dir / "plugin.yaml").write_text(PLUGIN_YAML.format(nn=nn, n=n))
        (plugin_dir / "__init__.py").write_text(PLUGIN_INIT.format(nn=nn, log_env=IMPORT_LOG_ENV))
    enabled = "".join(f"    - bench_plugin_{n:02d}\n" for n in range(1, ENABLED_COUNT + 1))
    (hermes_home / "config.yaml").write_text(f"plugins:\n  enabled:\n{enabled}")
    return templates


def fresh_copy(template: Path, dest: Path) -> Path:
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(template, dest, symlinks=True)
    return dest


# --------------------------------------------------------------------------
# Cold-start timing
# --------------------------------------------------------------------------


def case_argv(impl: Impl, case: StartupCase) -> list[str]:
    if not case.args:
        return [str(impl.python), "-c", "pass"]
    return [*impl.hermes, *case.args]


def timed_run(argv: list[str], env: dict[str, str], cwd: Path) -> Sample:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        timeout=RUN_TIMEOUT_S,
        check=False,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise RuntimeError(f"exit status {proc.returncode}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Sample(wall, cpu)


def check_run(impl: Impl, case: StartupCase, home: Path, cwd: Path) -> tuple[str | None, list[str]]:
    """Untimed warm-up that also validates the command.

    Returns (error or None, warnings).
    """
    proc = subprocess.run(
        case_argv(impl, case),
        cwd=cwd,
        env=impl_env(home),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
        check=False,
    )
    if proc.returncode != 0:
        tail = " | ".join((proc.stderr or proc.stdout).strip().splitlines()[-3:])
        return f"exit status {proc.returncode}: {tail}", []
    warnings: list[str] = []
    if case.home == "plugins50":
        listed = set(re.findall(r"bench_plugin_\d\d", proc.stdout))
        if len(listed) != PLUGIN_COUNT:
            warnings.append(f"{impl.key}: `{' '.join(case.args)}` listed {len(listed)} of {PLUGIN_COUNT} bench plugins")
    return None, warnings


def summarize(samples: list[Sample]) -> dict[str, Any]:
    walls = [s.wall_s for s in samples]
    cpus = [s.cpu_s for s in samples]
    return {
        "median_s": statistics.median(walls),
        "min_s": min(walls),
        "cpu_median_s": statistics.median(cpus),
        "samples_s": walls,
        "cpu_samples_s": cpus,
    }


def interleaved(impls: list[Impl], repeat: int) -> Iterator[tuple[int, Impl]]:
    """Yield (repetition, impl), alternating which implementation goes first."""
    for rep in range(repeat):
        for impl in impls if rep % 2 == 0 else list(reversed(impls)):
            yield rep, impl


def run_startup_case(
    case: StartupCase,
    impls: list[Impl],
    args: argparse.Namespace,
    templates: dict[str, Path],
    run_dir: Path,
    cwd: Path,
    warnings: list[str],
) -> dict[str, Any]:
    results: dict[str, Any] = {}
    active: list[Impl] = []
    for impl in impls:
        error, case_warnings = check_run(impl, case, impl.homes[case.home], cwd)
        warnings.extend(case_warnings)
        if error is None:
            active.append(impl)
        else:
            results[impl.key] = {"error": error}
            log(f"  {impl.key}: {case.label} failed, not timed: {error}")

    samples: dict[str, list[Sample]] = {impl.key: [] for impl in active}
    for rep, impl in interleaved(active, args.repeat):
        if impl.key in results:  # failed during an earlier repetition
            continue
        home = impl.homes[case.home]
        if args.fresh_home_per_run:
            home = fresh_copy(templates[case.home], run_dir / "fresh" / impl.key / case.home)
        try:
            samples[impl.key].append(timed_run(case_argv(impl, case), impl_env(home), cwd))
        except (RuntimeError, subprocess.TimeoutExpired) as exc:
            results[impl.key] = {"error": f"repetition {rep + 1}: {exc}"}
            log(f"  {impl.key}: {case.label} failed during timing: {exc}")
    for key, impl_samples in samples.items():
        results.setdefault(key, summarize(impl_samples))
    return results


# --------------------------------------------------------------------------
# Hook dispatch (in-process, one snippet per implementation)
# --------------------------------------------------------------------------


def run_hook_bench(impls: list[Impl], args: argparse.Namespace, cwd: Path) -> dict[str, Any]:
    per_round: dict[str, list[dict[str, Any]]] = {impl.key: [] for impl in impls}
    errors: dict[str, str] = {}
    for _round, impl in interleaved(impls, args.hook_rounds):
        if impl.key in errors:
            continue
        argv = [
            str(impl.python),
            "-B",  # don't write _hook_timing's bytecode into the repo
            str(impl.hook_script),
            "--listeners",
            "20",
            "--batches",
            str(args.hook_batches),
            "--min-batch-seconds",
            str(args.hook_min_batch_seconds),
        ]
        # A fresh empty home: the snippets must not read the real one either.
        proc = subprocess.run(
            argv,
            cwd=cwd,
            env=impl_env(impl.homes["empty"]),
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT_S * 5,
            check=False,
        )
        lines = proc.stdout.strip().splitlines()
        if proc.returncode != 0 or not lines:
            tail = " | ".join((proc.stderr or proc.stdout).strip().splitlines()[-3:])
            errors[impl.key] = f"exit status {proc.returncode}: {tail}"
            log(f"  {impl.key}: hook dispatch snippet failed: {errors[impl.key]}")
            continue
        per_round[impl.key].append(json.loads(lines[-1]))

    results: dict[str, Any] = {}
    for impl in impls:
        rounds = per_round[impl.key]
        if impl.key in errors or not rounds:
            results[impl.key] = {"error": errors.get(impl.key, "no result")}
            continue
        results[impl.key] = {
            "median_us": statistics.median(r["median_us"] for r in rounds),
            "min_us": min(r["min_us"] for r in rounds),
            "rounds": rounds,
        }
    return results


# --------------------------------------------------------------------------
# Which modules each command imports
# --------------------------------------------------------------------------


def parse_importtime(stderr: str, top: int = 10) -> list[dict[str, Any]]:
    """Slowest imports by cumulative time from `python -X importtime` output."""
    rows: list[dict[str, Any]] = []
    for line in stderr.splitlines():
        if not line.startswith("import time:"):
            continue
        parts = line[len("import time:") :].split("|")
        if len(parts) != 3 or not parts[1].strip().isdigit():
            continue  # the header line
        name = parts[2].rstrip()
        depth = (len(name) - len(name.lstrip())) // 2
        rows.append({"module": name.strip(), "depth": depth, "cumulative_us": int(parts[1])})
    rows.sort(key=lambda row: row["cumulative_us"], reverse=True)
    return rows[:top]


def probe_imports(impl: Impl, case: StartupCase, run_dir: Path, cwd: Path) -> dict[str, Any]:
    out = run_dir / f"modules-{impl.key}-{case.key}.json"
    import_log = run_dir / f"plugin-imports-{impl.key}-{case.key}.log"
    home = fresh_copy(impl.homes[case.home], run_dir / "probe" / impl.key / case.key)
    argv = [
        str(impl.python),
        "-X",
        "importtime",
        str(BENCH_DIR / "_modules_probe.py"),
        str(out),
        impl.entry_point,
        *case.args,
    ]
    proc = subprocess.run(
        argv,
        cwd=cwd,
        env=impl_env(home, {IMPORT_LOG_ENV: str(import_log)}),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
        check=False,
    )
    if not out.exists():
        tail = " | ".join(proc.stderr.strip().splitlines()[-3:])
        return {"error": f"probe wrote nothing (exit status {proc.returncode}): {tail}"}
    data = json.loads(out.read_text())
    if data["exit_code"] != 0:
        return {"error": f"the CLI failed (exit status {data['exit_code']}): {data.get('error') or ''}".strip()}
    modules: list[str] = data["modules"]
    roots = {name.partition(".")[0] for name in modules}
    plugin_imports = import_log.read_text().split() if import_log.exists() else []
    plugin_imports += [name for name in modules if "bench_plugin" in name]
    return {
        "module_count": len(modules),
        "heavy": {name: name in roots for name in HEAVY_MODULES},
        "plugin_code_imported": bool(plugin_imports),
        "plugin_modules": sorted(set(plugin_imports)),
        "slowest_imports": parse_importtime(proc.stderr),
    }


# --------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------


def fmt_ms(value: float | None) -> str:
    return "—" if value is None else f"{value * 1000:8.1f}"


def fmt_us(value: float | None) -> str:
    return "—" if value is None else f"{value:8.2f}"


def fmt_ratio(value: float | None) -> str:
    return "—" if value is None else f"{value:5.2f}"


def ratio(ours: dict[str, Any] | None, original: dict[str, Any] | None, field_name: str) -> float | None:
    if not ours or not original or field_name not in ours or field_name not in original:
        return None
    return float(ours[field_name]) / float(original[field_name])


def verdict(value: float | None, target: float | None) -> str:
    if target is None:
        return ""
    goal = f"< {target:.2f}"
    if value is None:
        return goal
    return f"{goal} {'PASS' if value < target else 'FAIL'}"


def render(report: dict[str, Any]) -> str:
    header = (
        f"{'measurement':<44} {'ours med':>9} {'ours min':>9} {'orig med':>9} {'orig min':>9}"
        f" {'ratio':>6} {'cpu r.':>6}  target"
    )
    lines = [
        f"Startup, wall ms over {report['meta']['repeat']} cold runs each (ratio = ours / original median)",
        header,
        "-" * len(header),
    ]
    for row in report["startup"].values():
        ours, orig = row.get("ours") or {}, row.get("original") or {}
        lines.append(
            f"{row['label']:<44} {fmt_ms(ours.get('median_s')):>9} {fmt_ms(ours.get('min_s')):>9}"
            f" {fmt_ms(orig.get('median_s')):>9} {fmt_ms(orig.get('min_s')):>9}"
            f" {fmt_ratio(row['ratio_median']):>6} {fmt_ratio(row['cpu_ratio_median']):>6}"
            f"  {verdict(row['ratio_median'], row['target_ratio'])}"
        )
    hook = report["hook_dispatch"]
    if "original" in hook or "ours" in hook:
        ours, orig = hook.get("ours") or {}, hook.get("original") or {}
        lines += [
            "",
            (
                f"One post_tool_call dispatch, 20 listeners, µs (median of {report['meta']['hook_rounds']} rounds"
                " x batches)"
            ),
            (
                f"{'hooks.call / invoke_hook':<44} {fmt_us(ours.get('median_us')):>9}"
                f" {fmt_us(ours.get('min_us')):>9} {fmt_us(orig.get('median_us')):>9}"
                f" {fmt_us(orig.get('min_us')):>9} {fmt_ratio(hook['ratio_median']):>6}"
            ),
        ]
    if report["imports"]:
        lines += [
            "",
            "Modules imported (yes = imported; plugins = any bench plugin code ran)",
            (
                f"{'impl / command':<30} "
                + " ".join(f"{m:>9}" for m in HEAVY_MODULES)
                + f" {'plugins':>8} {'modules':>8}"
            ),
        ]
    for impl_key, per_case in report["imports"].items():
        for case_key, probe in per_case.items():
            name = f"{impl_key} {CASES_BY_KEY[case_key].label.split(' (')[0]}"
            if "error" in probe:
                lines.append(f"{name:<30} error: {probe['error']}")
                continue
            marks = " ".join(f"{'yes' if probe['heavy'][m] else 'no':>9}" for m in HEAVY_MODULES)
            plugin_mark = "yes" if probe["plugin_code_imported"] else "no"
            lines.append(f"{name:<30} {marks} {plugin_mark:>8} {probe['module_count']:>8}")
    if report["import_targets"]:
        lines.append("")
        for description, ok in report["import_targets"].items():
            lines.append(f"{'PASS' if ok else 'FAIL'}  {description}")
    for note in report["notes"]:
        lines.append(f"note: {note}")
    return "\n".join(lines)


# --------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=15, help="cold runs per command and implementation")
    parser.add_argument("--json", type=Path, help="also write the full results as JSON here")
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/hermes-bench"), help="cache for virtualenvs")
    parser.add_argument("--ours-python", type=Path, help="use this interpreter (with our package) for ours")
    parser.add_argument("--no-ours", action="store_true", help="measure only the original")
    parser.add_argument("--repo", type=Path, default=DEFAULT_REPO, help="our repo, installed with pip")
    parser.add_argument("--base-python", default=sys.executable, help="interpreter the virtualenvs are made from")
    parser.add_argument(
        "--only", nargs="+", choices=[c.key for c in STARTUP_CASES], help="run only these startup cases"
    )
    parser.add_argument("--fresh-home-per-run", action="store_true", help="copy a new home before every run")
    parser.add_argument("--hook-rounds", type=int, default=3, help="hook snippet runs per implementation")
    parser.add_argument("--hook-batches", type=int, default=7)
    parser.add_argument("--hook-min-batch-seconds", type=float, default=0.2)
    parser.add_argument("--skip-hooks", action="store_true")
    parser.add_argument("--skip-imports", action="store_true")
    parser.add_argument("--keep-homes", action="store_true", help="keep the temporary homes for inspection")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    workdir: Path = args.workdir.resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    run_dir = Path(tempfile.mkdtemp(prefix="run-", dir=workdir))
    cwd = run_dir / "cwd"  # empty: nothing importable from the current directory
    cwd.mkdir()
    notes: list[str] = []
    try:
        original_python = setup_original(workdir, args.base_python)
        if original_python is None:
            log("error: could not install the original; see the setup log above")
            return 1
        original = make_impl("original", original_python, "hermes_cli", BENCH_DIR / "hook_dispatch_original.py", cwd)
        if isinstance(original, str):
            log(f"error: original unusable: {original}")
            return 1

        ours: Impl | str
        if args.no_ours:
            ours = "disabled with --no-ours"
        elif args.ours_python is not None:
            ours = make_impl("ours", args.ours_python, OUR_IMPORT_NAME, BENCH_DIR / "hook_dispatch_ours.py", cwd)
        else:
            ours_python = setup_ours(workdir, args.base_python, args.repo.resolve())
            ours = (
                make_impl("ours", ours_python, OUR_IMPORT_NAME, BENCH_DIR / "hook_dispatch_ours.py", cwd)
                if ours_python is not None
                else f"installing {args.repo} failed (see {workdir / 'setup-ours.log'})"
            )
        if isinstance(ours, str):
            notes.append(f"ours skipped: {ours}")
            log(f"[ours] SKIPPED: {ours}. Measuring the original only.")
        impls = [impl for impl in (ours, original) if isinstance(impl, Impl)]
        for impl in impls:
            log(f"[{impl.key}] version {impl.version}; python {impl.python}; hermes = {' '.join(impl.hermes)[:90]}")

        templates = build_home_templates(run_dir / "templates")
        for impl in impls:
            impl.homes = {
                name: fresh_copy(template, run_dir / "homes" / impl.key / name) for name, template in templates.items()
            }

        load_before = os.getloadavg()
        warnings: list[str] = []
        startup: dict[str, Any] = {}
        for case in STARTUP_CASES:
            if args.only and case.key not in args.only:
                continue
            log(f"[run] {case.label}: {args.repeat} interleaved cold runs per implementation")
            results = run_startup_case(case, impls, args, templates, run_dir, cwd, warnings)
            ours_res, orig_res = results.get("ours"), results.get("original")
            startup[case.key] = {
                "label": case.label,
                "args": list(case.args),
                "home": case.home,
                "target_ratio": case.target,
                "ours": ours_res,
                "original": orig_res,
                "ratio_median": ratio(ours_res, orig_res, "median_s"),
                "ratio_min": ratio(ours_res, orig_res, "min_s"),
                "cpu_ratio_median": ratio(ours_res, orig_res, "cpu_median_s"),
            }
            row = startup[case.key]
            row["meets_target"] = (
                None if case.target is None or row["ratio_median"] is None else row["ratio_median"] < case.target
            )

        hook: dict[str, Any] = {}
        if not args.skip_hooks:
            log(f"[run] hook dispatch: {args.hook_rounds} interleaved rounds per implementation")
            hook = run_hook_bench(impls, args, cwd)
        hook["ratio_median"] = ratio(hook.get("ours"), hook.get("original"), "median_us")

        imports: dict[str, dict[str, Any]] = {}
        import_targets: dict[str, bool] = {}
        if not args.skip_imports:
            log("[run] import probes")
            for impl in impls:
                imports[impl.key] = {
                    key: probe_imports(impl, CASES_BY_KEY[key], run_dir, cwd) for key in IMPORT_CHECK_COMMANDS
                }
            for key, probe in imports.get("ours", {}).items():
                label = CASES_BY_KEY[key].label.split(" (")[0]
                ok = (
                    "error" not in probe
                    and not probe["plugin_code_imported"]
                    and not any(probe["heavy"].get(name) for name in FORBIDDEN_FOR_OURS)
                )
                import_targets[f"ours `{label}` imports no openai, anthropic or plugin code"] = ok

        for row in startup.values():
            for key in ("ours", "original"):
                if row[key] and "error" in row[key]:
                    notes.append(f"{key}: `{row['label']}` not timed: {row[key]['error']}")
        for key in ("ours", "original"):
            if "error" in (hook.get(key) or {}):
                notes.append(f"{key}: hook dispatch not timed: {hook[key]['error']}")
        notes.extend(warnings)
        report: dict[str, Any] = {
            "meta": {
                "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                "platform": platform.platform(),
                "cpu_count": os.cpu_count(),
                "loadavg_before": load_before,
                "loadavg_after": os.getloadavg(),
                "repeat": args.repeat,
                "hook_rounds": args.hook_rounds,
                "fresh_home_per_run": args.fresh_home_per_run,
                "implementations": {
                    impl.key: {
                        "version": impl.version,
                        "python": str(impl.python),
                        "command": impl.hermes,
                        "entry_point": impl.entry_point,
                    }
                    for impl in impls
                },
                "ours_skipped": ours if isinstance(ours, str) else None,
            },
            "startup": startup,
            "hook_dispatch": hook,
            "imports": imports,
            "import_targets": import_targets,
            "notes": notes,
        }
        print(render(report))
        if args.json:
            args.json.parent.mkdir(parents=True, exist_ok=True)
            args.json.write_text(json.dumps(report, indent=2) + "\n")
            log(f"[done] JSON written to {args.json}")
        return 0
    finally:
        if args.keep_homes:
            log(f"[done] homes kept under {run_dir}")
        else:
            shutil.rmtree(run_dir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

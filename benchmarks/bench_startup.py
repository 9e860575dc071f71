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
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench_env import (  # noqa: E402
    BENCH_DIR, CASES_BY_KEY, DEFAULT_REPO, FORBIDDEN_FOR_OURS, HEAVY_MODULES,
    IMPORT_CHECK_COMMANDS, IMPORT_LOG_ENV, OUR_IMPORT_NAME, PLUGIN_COUNT, RUN_TIMEOUT_S,
    STARTUP_CASES, Impl, Sample, StartupCase, impl_env, log, make_impl, setup_original,
    setup_ours)
from _bench_homes import build_home_templates, configure_original, fresh_copy  # noqa: E402
from _bench_report import ratio, render  # noqa: E402


# --------------------------------------------------------------------------
# Cold-start timing
# --------------------------------------------------------------------------


def impl_home(impl: Impl, template: Path, dest: Path) -> Path:
    """A copy of ``template`` for ``impl``; the original's is configured as a careful user's."""
    home = fresh_copy(template, dest)
    if impl.key == "original":
        configure_original(home / "hermes-home")
    return home


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
        if args.fresh_home_per_run or case.fresh:
            home = impl_home(impl, templates[case.home], run_dir / "fresh" / impl.key / case.home)
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
            ours = make_impl("ours", args.ours_python.absolute(), OUR_IMPORT_NAME, BENCH_DIR / "hook_dispatch_ours.py", cwd)
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
                name: impl_home(impl, template, run_dir / "homes" / impl.key / name)
                for name, template in templates.items()
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

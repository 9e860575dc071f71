"""Provider catalogue benchmark: `hermes chat -q` start-up with the whole catalogue (every
row of plugins/model-providers/catalogue/profiles.yaml, 40+) against the same tree with only
its first ten rows, and (``--against REF``, default ``main``) against REF's bundled provider
plugins (ten modules, one plugin each), in one run, interleaved.

Each variant is a copy of the bundled plugin tree selected with ``HERMES_BUNDLED_PLUGINS``, so
all three are discovered, validated and cached the same way; one untimed warm-up run each
fills the caches. Every repetition runs each variant once, in a rotating order, against the
fake LLM server (custom provider, instant reply); wall time and CPU time (user + system, less
sensitive to a busy machine) are reported. Also timed in-process: validating the catalogue
(a first start, or after the file changed) and building its profiles from the validation
cache (every later start).

    .venv/bin/python benchmarks/bench_catalogue.py [--runs 15] [--against main|none] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

import hermes_agent.plugins
from hermes_agent.kits.model_catalogue.rows import read_catalogue
from hermes_agent.testing.fake_llm import FakeLLMServer, reply_text

TREE = Path(list(hermes_agent.plugins.__path__)[0])
CATALOGUE = TREE / "model-providers" / "catalogue" / "profiles.yaml"
REPO = TREE.parent


def hermes() -> str:
    path = shutil.which("hermes", path=str(Path(sys.executable).parent))
    if not path:
        raise SystemExit("the hermes script is not installed next to this interpreter")
    return path


def copy_tree(root: Path, name: str) -> Path:
    target = root / name
    shutil.copytree(TREE, target, ignore=shutil.ignore_patterns("__pycache__"))
    return target


def first_rows(tree: Path, count: int) -> None:
    path = tree / "model-providers" / "catalogue" / "profiles.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["profiles"] = data["profiles"][:count]
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")


def modules_of(tree: Path, ref: str) -> bool:
    """Replace the catalogue with ``ref``'s per-provider plugins; False if git cannot."""
    providers = tree / "model-providers"
    archive = subprocess.run(["git", "-C", str(REPO), "archive", ref, "plugins/model-providers"],
                             capture_output=True)
    if archive.returncode != 0:
        print(f"skipping {ref}: {archive.stderr.decode().strip()}", file=sys.stderr)
        return False
    shutil.rmtree(providers)
    with tempfile.TemporaryDirectory() as unpack:
        subprocess.run(["tar", "-x", "-C", unpack], input=archive.stdout, check=True)
        shutil.copytree(Path(unpack) / "plugins" / "model-providers", providers)
    return True


def home_for(root: Path, name: str, server: FakeLLMServer) -> Path:
    home = root / f"home-{name}"
    home.mkdir()
    (home / "config.yaml").write_text(yaml.safe_dump({
        "model": {"provider": "custom", "base_url": server.openai_base_url, "default": "m",
                  "max_retries": 0},
        "sessions": {"auto_title": False}}))
    return home


def run_once(home: Path, tree: Path, root: Path) -> tuple[float, float]:
    """Wall time and CPU time (user + system) of one `hermes chat -q`, in seconds."""
    env = {"HERMES_HOME": str(home), "HERMES_BUNDLED_PLUGINS": str(tree), "HOME": str(root),
           "PATH": os.environ.get("PATH", ""), "TERM": "dumb"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([hermes(), "chat", "-q", "hi"], env=env, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=120)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0 or "pong" not in done.stdout:
        raise SystemExit(f"chat -q failed ({done.returncode}): {done.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return elapsed, cpu


def catalogue_read_ms(rounds: int = 50) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        read_catalogue(CATALOGUE)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def cached_load_ms(rounds: int = 200) -> float:
    from hermes_agent import ValidationCache
    from hermes_agent.kits.model_catalogue import load_profiles

    with tempfile.TemporaryDirectory() as tmp:
        cache = ValidationCache(Path(tmp) / "validated.json", shipped=False)
        load_profiles(CATALOGUE, cache)  # the miss: validated and stored
        times = []
        for _ in range(rounds):
            start = time.perf_counter()
            load_profiles(CATALOGUE, cache)
            times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--against", default="main", help="a git ref, or 'none'")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    rows = len(read_catalogue(CATALOGUE).profiles)
    with tempfile.TemporaryDirectory(prefix="bench-catalogue-") as tmp, \
            FakeLLMServer(default_reply=reply_text("pong")) as server:
        root = Path(tmp)
        variants = {f"catalogue ({rows} rows)": copy_tree(root, "all")}
        ten = copy_tree(root, "ten")
        first_rows(ten, 10)
        variants["catalogue (10 rows)"] = ten
        if args.against != "none":
            modules = copy_tree(root, "modules")
            if modules_of(modules, args.against):
                variants[f"{args.against}: 10 modules"] = modules
        homes = {name: home_for(root, str(i), server) for i, name in enumerate(variants)}
        for name, tree in variants.items():  # warm-up: caches filled, not timed
            run_once(homes[name], tree, root)
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in variants}
        names = list(variants)
        for rep in range(args.runs):
            order = names[rep % len(names):] + names[:rep % len(names)]
            for name in order:
                times[name].append(run_once(homes[name], variants[name], root))
    wall = {name: statistics.median(w for w, _ in values) * 1000 for name, values in times.items()}
    cpu = {name: statistics.median(c for _, c in values) * 1000 for name, values in times.items()}
    base = "catalogue (10 rows)"
    print(f"`hermes chat -q`, {args.runs} interleaved runs each (medians; ratio to 10 rows):")
    for name in times:
        print(f"  {name:<24} wall {wall[name]:7.1f} ms ({wall[name] / wall[base]:.3f})   "
              f"cpu {cpu[name]:7.1f} ms ({cpu[name] / cpu[base]:.3f})")
    read_ms = catalogue_read_ms()
    cached_ms = cached_load_ms()
    print(f"in-process, {rows} rows: validating profiles.yaml {read_ms:.2f} ms; "
          f"building the profiles from the cache (later starts) {cached_ms:.3f} ms (medians)")
    if args.json:
        args.json.write_text(json.dumps({
            "runs": args.runs, "wall_median_ms": wall, "cpu_median_ms": cpu,
            "wall_ratio_to_10_rows": {n: m / wall[base] for n, m in wall.items()},
            "cpu_ratio_to_10_rows": {n: m / cpu[base] for n, m in cpu.items()},
            "catalogue_read_ms": read_ms, "cached_load_ms": cached_ms}, indent=2))


if __name__ == "__main__":
    main()

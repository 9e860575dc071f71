"""Environments for bench_startup.py: virtualenvs for both implementations, process helpers."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
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
# What is measured
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class StartupCase:
    key: str
    label: str
    args: tuple[str, ...]  # CLI arguments; empty means `python -c pass`
    home: str  # which home template: "empty" or "plugins50"
    target: float | None  # ours/original median ratio must stay under this
    fresh: bool = False  # every timed run gets a new copy of the home (a first run)


STARTUP_CASES: tuple[StartupCase, ...] = (
    StartupCase("python_floor", "python -c pass (interpreter floor)", (), "empty", None),
    StartupCase("version", "hermes --version", ("--version",), "empty", 1 / 3),
    StartupCase("help", "hermes --help", ("--help",), "empty", 0.25),
    StartupCase("help_first", "hermes --help (first run, empty home)", ("--help",), "empty",
                0.33, fresh=True),
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

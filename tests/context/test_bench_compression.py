"""benchmarks/bench_compression.py runs against scripted fake servers: nothing but the measured
conversation (and its summariser) may send them requests."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_compression.py"


def load_bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_compression", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_benchmark_session_sends_only_the_conversation(tmp_path: Path) -> None:
    # a background session title would take a scripted reply (or add a request that breaks
    # the prompt-cache prefix): every request must extend the one before it
    result = load_bench().session(tmp_path, compress=False, turns=3)
    assert result["breaks"] == 0
    assert result["compressions"] == 0

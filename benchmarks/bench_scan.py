"""Injection-scan benchmark: how long ``scan`` takes on 1 MB texts of hostile and ordinary
shapes, on a typical 10 KB AGENTS.md, and how long loading a context file takes end to end.

Shapes (1 MiB each unless noted):
  comments      ``<!--`` repeated (stalled the previous scan for ~20 s)
  comment_pairs ``<!-- todo: fix -->`` repeated: 55,000 closed comments
  open_comment  ``<!-- note`` repeated: one unclosed comment holding the rest of the file
  prose         English project prose in 80-column lines, with version numbers
  long_line     the same prose on one line
  invisible     prose with a zero-width space after every word
  invisible_only  invisible characters of 28 kinds and nothing else, no white space
  cjk           Chinese prose
  cyrillic      Russian prose (every letter goes through the look-alike table)
  code          Python source (hermes's own modules but the scanners' tables, concatenated)
  multilingual  project prose in French, German, Spanish, Russian, Chinese, Japanese, Korean
                and Arabic, mixed line by line
  base64_lines  a base64 attachment of random bytes in 76-character lines (every line is a
                piece the decoder tries)
  agents_10k    a typical 10 KB AGENTS.md (headings, lists, code, an HTML TODO, emoji)
  load_10k      context_files.load of that AGENTS.md from a temporary git-less directory
  load_2g       context_files.load of a sparse 2 GiB AGENTS.md (only its ends are read)

    .venv/bin/python benchmarks/bench_scan.py [--repeat 21] [--json out.json] [--against REV]

Reports wall and CPU (process) time per call: median, p95 and min, in ms. The CPU figures are
steadier on a busy machine. Target: under 50 ms for each 1 MB shape. ``--against REV`` also
scans every shape with the scanner of git revision REV, interleaved call by call with ours, so
both run in the same conditions.
"""

from __future__ import annotations

import argparse
import base64
import json
import importlib
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from hermes_agent.builtin_plugins.agent import context_files
from hermes_agent.builtin_plugins.agent.injection import scan

MIB = 1 << 20
REPO = Path(__file__).resolve().parents[1]
_SCANNER = ("injection.py", "injection_rules.py", "unicode_fold.py", "scan_memo.py",
            "rule_needs.py", "injection_intl.py", "injection_decode.py")  # the files of the scanner, where a revision has them
_WORDS = ("the build uses pytest and ruff run make test before you push to main never commit "
          "secrets use small functions keep docs in sync prefer pathlib over os.path python "
          "3.12 node 20 see docs/setup.md for details when a test fails fix the cause").split()


def prose(size: int, seed: int = 1) -> str:
    rng = random.Random(seed)
    words: list[str] = []
    length = 0
    while length < size:
        word = rng.choice(_WORDS)
        words.append(word)
        length += len(word) + 1
    return " ".join(words)[:size]


def lines(text: str, width: int = 80) -> str:
    return "\n".join(text[i:i + width] for i in range(0, len(text), width))


def agents_md(size: int = 10_000) -> str:
    block = ("# Project rules ✅\n\n<!-- TODO: document the release process -->\n"
             "## Tests\nRun `pytest -q` before you push. Never commit secrets.\n\n"
             "## Layout\n| Path | What |\n|---|---|\n| `src/` | code |\n| `build/` | ignore |\n\n"
             "```bash\nmake lint && make test\n```\n\n" + lines(prose(600)) + "\n\n")
    return (block * (size // len(block) + 1))[:size]


# zero-width, bidirectional, word joiner and invisible operators, deprecated format characters,
# a Hangul filler, a variation selector and the combining grapheme joiner
_INVISIBLE = ("\u200b\u200c\u200d\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2060\u2061\u2062"
              "\u2063\u2064\u2066\u2067\u2068\u2069\u206a\u206b\u206c\u206d\u206e\u206f"
              "\u3164\ufe00\u034f")


def shapes() -> dict[str, str]:
    words = prose(MIB).split(" ")
    return {
        "comments": "<!--" * (MIB // 4),
        "comment_pairs": ("<!-- todo: fix --> " * (MIB // 19 + 1))[:MIB],
        "open_comment": ("<!-- note " * (MIB // 10 + 1))[:MIB],
        "prose": lines(prose(MIB)),
        "long_line": prose(MIB),
        "invisible": "\u200b ".join(words)[:MIB],
        "invisible_only": (_INVISIBLE * (MIB // len(_INVISIBLE) + 1))[:MIB],
        "cjk": ("请使用 pytest 运行测试，提交前执行 make lint。不要把密钥提交到仓库。" * 30_000)[:MIB // 3],
        "cyrillic": ("Перед коммитом запускайте тесты, не храните пароли в коде. " * 9000)[:MIB // 2],
        "code": code(MIB),
        "multilingual": multilingual(MIB // 2),
        "base64_lines": lines(base64.b64encode(random.Random(3).randbytes(MIB * 3 // 4))
                              .decode(), 76)[:MIB],
        "agents_10k": agents_md(),
    }


_TABLES = ("injection", "unicode_fold", "rule_needs", "fence", "danger")  # the scanners' own


def code(size: int) -> str:
    """hermes's own Python modules (but the scanners' phrase tables), up to ``size``
    characters."""
    parts: list[str] = []
    length = 0
    for path in sorted((REPO / "builtin_plugins").rglob("*.py")):
        if any(name in str(path.relative_to(REPO)) for name in _TABLES):
            continue
        text = path.read_text(encoding="utf-8")
        parts.append(text)
        length += len(text)
        if length >= size:
            break
    return "".join(parts)[:size]


_LINES = (
    "Les tests se lancent avec pytest ; ignorez le dossier build lors des recherches.",
    "Vor jedem Commit make lint ausführen, die bisherigen Regeln gelten weiter.",
    "Ejecuta npm test antes de subir cambios; las instrucciones están en el README.",
    "Запускайте тесты командой pytest, не храните пароли в коде.",
    "请使用 pytest 运行测试，提交前执行 make lint。系统提示词在 prompts 目录。",
    "テストは pytest で実行します。build ディレクトリは無視してください。",
    "테스트는 pytest로 실행합니다. 이전 설치 지침은 docs 폴더에 있습니다.",
    "شغّل الاختبارات باستخدام pytest ولا تحفظ المفاتيح السرية في المستودع.",
)


def multilingual(size: int) -> str:
    text = "\n".join(_LINES)
    return ("\n".join([text] * (size // len(text) + 1)))[:size]


def measure(calls: list[Callable[[], object]], repeat: int) -> list[dict[str, float]]:
    """Each call ``repeat`` times, interleaved call by call, after one warm-up call each
    (compiled patterns, the look-alike table)."""
    for call in calls:
        call()
    wall: list[list[float]] = [[] for _ in calls]
    cpu: list[list[float]] = [[] for _ in calls]
    for _ in range(repeat):
        for i, call in enumerate(calls):
            w0, c0 = time.perf_counter(), time.process_time()
            call()
            wall[i].append(time.perf_counter() - w0)
            cpu[i].append(time.process_time() - c0)

    def summary(values: list[float]) -> tuple[float, float, float]:
        ordered = sorted(values)
        p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
        return statistics.median(ordered) * 1e3, p95 * 1e3, ordered[0] * 1e3

    rows = []
    for w, c in zip(wall, cpu):
        (wm, wp, wmin), (cm, cp, cmin) = summary(w), summary(c)
        rows.append({"wall_median_ms": wm, "wall_p95_ms": wp, "wall_min_ms": wmin,
                     "cpu_median_ms": cm, "cpu_p95_ms": cp, "cpu_min_ms": cmin})
    return rows


def scanner_at(rev: str) -> Callable[[str], list[str]]:
    """The ``scan`` function of git revision ``rev``, imported from its sources in a
    temporary package."""
    package = Path(tempfile.mkdtemp(prefix="bench-scan-")) / "scan_at_rev"
    package.mkdir()
    (package / "__init__.py").write_text("")
    for name in _SCANNER:
        shown = subprocess.run(
            ["git", "-C", str(REPO), "show", f"{rev}:builtin_plugins/agent/{name}"],
            capture_output=True, text=True)
        if shown.returncode == 0:
            (package / name).write_text(shown.stdout)
    sys.path.insert(0, str(package.parent))
    return importlib.import_module("scan_at_rev.injection").scan  # type: ignore[no-any-return]


def table(title: str, results: dict[str, dict[str, float]]) -> None:
    header = (f"{'shape':<14} {'chars':>10} {'wall med':>9} {'wall p95':>9} {'cpu med':>8} "
              f"{'cpu p95':>8}")
    print(f"{title}\n{header}\n{'-' * len(header)}")
    for name, row in results.items():
        print(f"{name:<14} {int(row['chars']):>10,} {row['wall_median_ms']:>9.1f} "
              f"{row['wall_p95_ms']:>9.1f} {row['cpu_median_ms']:>8.1f} {row['cpu_p95_ms']:>8.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=21)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--against", metavar="REV", help="also time the scanner of this revision")
    args = parser.parse_args()
    theirs = scanner_at(args.against) if args.against else None
    results: dict[str, dict[str, float]] = {}
    before: dict[str, dict[str, float]] = {}
    for name, text in shapes().items():
        calls: list[Callable[[], object]] = [lambda t=text: scan(t)]
        if theirs is not None:
            calls.append(lambda t=text: theirs(t))
        rows = measure(calls, args.repeat)
        results[name] = {"chars": len(text), **rows[0]}
        if theirs is not None:
            before[name] = {"chars": len(text), **rows[1]}
    with tempfile.TemporaryDirectory() as tmp:
        small, big = Path(tmp, "small"), Path(tmp, "big")
        small.mkdir()
        big.mkdir()
        (small / "AGENTS.md").write_text(agents_md(), encoding="utf-8")
        with (big / "AGENTS.md").open("wb") as handle:
            handle.write(agents_md().encode())
            handle.truncate(2 << 30)
        results["load_10k"] = {"chars": 10_000,
                               **measure([lambda: context_files.load(small)], args.repeat)[0]}
        results["load_2g"] = {"chars": 2 << 30,
                              **measure([lambda: context_files.load(big)], args.repeat)[0]}
    table(f"scan / load, ms over {args.repeat} runs", results)
    if theirs is not None:
        table(f"\nscan at {args.against}, interleaved with the above", before)
    if args.json:
        args.json.write_text(json.dumps({"repeat": args.repeat, "results": results,
                                         "against": args.against, "before": before}, indent=2))


if __name__ == "__main__":
    sys.exit(main())

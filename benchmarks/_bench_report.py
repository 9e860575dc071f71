"""The report of bench_startup.py: formatting, ratios against targets, the Markdown table."""

from __future__ import annotations

from typing import Any
from _bench_env import CASES_BY_KEY, HEAVY_MODULES


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



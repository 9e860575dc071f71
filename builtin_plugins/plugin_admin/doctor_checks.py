"""``hermes doctor``'s check of the plugins (``doctor_checks``): the diagnosis of ``hermes
plugins doctor`` (:mod:`.doctor`) for the plugins of the doctor run's booted kernel, as
findings. A plugin that failed to load, or that the user wants and that is not active, is a
problem; a loaded one that is suspect (undeclared tools, an earlier attempt to stop hermes)
a warning; plugins that are off by the user's choice (disabled, not enabled, safe mode) are
not mentioned."""

from __future__ import annotations

from shlex import quote
from typing import TYPE_CHECKING, Any

from hermes_agent.api import Finding

from .doctor import Reason, Report, diagnose

if TYPE_CHECKING:
    from hermes_agent import Kernel


#: reasons a plugin is off that the user chose: not faults
CHOSEN = frozenset({"disabled", "not_enabled", "not_selected", "safe_mode", "load_filter"})


def plugin_findings(kernel: "Kernel") -> list[Finding]:
    reports, general = diagnose(kernel, include_builtin=True, load=True)
    out: list[Finding] = []
    for report in reports:
        out.extend(_report_findings(report))
    for reason in general:
        if reason.level != "note":
            out.append(_finding("plugins", reason, "problem" if reason.level == "error" else "warn"))
    if not out:
        loaded = sum(report.active for report in reports)
        out.append(Finding("plugins", "ok", f"{loaded} plugins loaded, none failed"))
    return out


def _report_findings(report: Report) -> list[Finding]:
    check = f"plugin {report.name}"
    failed = report.state == "failed"
    wanted = report.wanted or report.source == "builtin"
    out = []
    for reason in report.reasons:
        if reason.level == "note" or reason.code in CHOSEN:
            continue
        if reason.level == "error" and (failed or (wanted and not report.active
                                                   and report.state != "enabled")):
            out.append(_finding(check, reason, "problem", report.name))
        elif reason.level == "warning" and (report.active or failed or wanted):
            out.append(_finding(check, reason, "warn"))
    return out


def _finding(check: str, reason: Reason, status: str, plugin: str = "") -> Finding:
    fix = reason.fix or "see `hermes plugins doctor`"
    if plugin and "hermes " not in fix:
        fix += f"; to turn it off meanwhile: hermes plugins disable {quote(plugin)}"
    return Finding(check, status, f"[{reason.code}] {reason.message}", fix)  # type: ignore[arg-type]

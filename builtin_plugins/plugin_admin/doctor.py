"""`hermes plugins doctor [NAME]`: every reason a plugin is not active.

By default nothing is imported: plugin.yaml, config and the load ledger (what the last real
load did, which keeps register() and import failures) are enough; a plugin that changed
since it was last loaded is reported as such. ``--load`` boots the kernel exactly as a
session would and checks that. Either way each plugin is checked on its own terms, so a
plugin that is both not enabled and missing an env var shows both reasons. Load failures are
explained from the kernel's ``PluginStatus.code`` and ``cause``, never from the wording of
its message. Loaded plugins show what they registered and any difference from what
plugin.yaml declares.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from shlex import quote
from typing import Any

from hermes_agent import (
    DEFAULT_ON_KINDS,
    Kernel,
    PluginRecord,
    PluginStatus,
    load_filter,
    selected_by_slot,
)
from hermes_agent.kits.secrets import mask_secrets
from hermes_agent.kits.text import plural

from .ledger import last_outcome, read_ledger, recorded_statuses
from .lockfile import UNREADABLE_FIX, LockEntry, LockUnreadable, read_lock
from .python_deps import missing_python_dependencies, pip_command

_CODE_FIX = "fix the error in the plugin's code, or update or disable the plugin"
# kernel failure code -> fix ({name}: the plugin); the message is the kernel's reason.
FAILURE_FIXES = {
    "register_error": "fix the plugin's register(ctx), or disable it",
    "hookimpl_invalid": "match the @hookimpl function's name and arguments to a hook in "
                        "docs/hooks.md, or disable the plugin",
    "no_entry": "give the plugin's module a register(ctx) function (or point its entry point "
                "at one)",
    "no_provider": "call the ctx.register_..._provider method of its slot in register(ctx)",
    "duplicate": "rename one of the two (in plugin.yaml, or the clashing tool or command), "
                 "or disable one of them",
    "core_tool_override": "rename the tool; or, if the plugin means to replace it (override=True), "
                          "hermes config set plugins.entries.{name}.allow_tool_override true",
    "halt_attempt": "the plugin raised SystemExit or KeyboardInterrupt while hermes ran; update "
                    "or fix it, or disable it: hermes plugins disable {name}",
}

MANIFEST_PROBLEMS = {  # code -> (label, fix)
    "manifest_invalid": ("invalid manifest",
                         "fix plugin.yaml (check it with `hermes plugins validate PATH`)"),
    "incompatible": ("incompatible", "install a version of the plugin made for this hermes, or "
                     "ask its author to widen requires_hermes"),
}


@dataclass
class Reason:
    code: str
    message: str
    fix: str = ""
    level: str = "error"  # error: keeps the plugin off; warning: loaded but suspect; note

    def __post_init__(self) -> None:  # causes and sources may quote URLs with credentials
        self.message = mask_secrets(self.message)
        self.fix = mask_secrets(self.fix)


@dataclass
class Report:
    name: str
    source: str
    version: str
    state: str
    location: str
    wanted: bool  # the user enabled or selected it
    active: bool
    tools: int = 0
    hooks: int = 0
    reasons: list[Reason] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""


def _failure(status: PluginStatus) -> Reason:
    """Why a load failed, from the kernel's code (see PluginStatus.code)."""
    record, code = status.record, status.code
    if code == "import_error" and record.entry_point:
        return Reason("entry_point_error", f"its entry point failed to load: {status.cause}",
                      f"{_CODE_FIX}; or reinstall {record.entry_point.dist_name or 'it'}")
    if code == "import_error":
        return Reason("import_error", f"importing it failed: {status.cause}", _CODE_FIX)
    if code in MANIFEST_PROBLEMS:
        label, fix = MANIFEST_PROBLEMS[code]
        return Reason(code, manifest_message(label, status.reason), fix)
    if code == "duplicate" and status.clash.get("kept_by"):
        keeper, kind = status.clash["kept_by"], status.clash.get("kind", "name")
        return Reason(code, first_line(status.reason),
                      f"disable one of them (`hermes plugins disable {quote(record.name)}` or "
                      f"`hermes plugins disable {quote(keeper)}`), or rename the {kind} in one of them")
    if code in FAILURE_FIXES:
        # pluggy puts the offending argument on a later line of its message: keep them all
        message = status.reason.strip() if code == "hookimpl_invalid" else first_line(
            status.reason)
        return Reason(code, message, FAILURE_FIXES[code].format(name=quote(record.name)))
    return Reason("load_error", first_line(status.reason),
                  f"see `hermes plugins info {quote(record.name)}`")


def manifest_message(label: str, reason: str) -> str:
    """``label: <file>:`` and one problem per line, as the manifest check reported them."""
    heading, _, problems = reason.strip().partition("\n")
    heading = heading.removeprefix("invalid plugin manifest ")
    lines = [line.strip() for line in problems.splitlines() if line.strip()]
    return "\n".join([f"{label}: {heading}", *lines]) if lines else f"{label}: {heading}"


def check(kernel: Kernel, status: PluginStatus, last_fault: dict[str, Any] | None = None) -> Report:
    """Every reason ``status``'s plugin is not active (or suspect). ``last_fault``: the load
    ledger's record of it being unloaded in an earlier session for trying to stop hermes."""
    record = status.record
    config, env = kernel.config, kernel.env
    exclusive = record.kind == "exclusive"
    declared = config.slots.get(record.slot or "memory")
    slot_key = declared.config_key if exclusive and declared else ""
    selected = selected_by_slot(record, config)
    wanted = record.source != "builtin" and (record.matches(config.plugins_enabled) or selected)
    report = Report(record.name, record.source, record.version, status.state, record.location,
                    wanted, status.state == "loaded", len(status.tools), len(status.hooks))
    add = report.reasons.append
    if status.state == "failed":
        add(_failure(status))
    if status.state == "enabled" and wanted:  # should load; not loaded since it last changed
        add(Reason("not_loaded", "not loaded since it last changed, so its load-time problems "
                   "are not known yet", f"hermes plugins doctor --load {quote(record.name)}",
                   "note"))
    if record.matches(config.plugins_disabled):
        add(Reason("disabled", "listed in plugins.disabled",
                   f"hermes plugins enable {quote(record.name)}"))
    if record.source != "builtin":
        if (env.get("HERMES_SAFE_MODE") or "").strip().lower() in ("1", "true", "yes", "on"):
            add(Reason("safe_mode", "safe mode loads builtin plugins only", "unset HERMES_SAFE_MODE"))
        only = load_filter(env)
        if only is not None and not record.matches(only):
            add(Reason("load_filter", "not listed in HERMES_LOAD_PLUGINS",
                       "add it to HERMES_LOAD_PLUGINS or unset that variable"))
        default_on = record.source == "bundled" and record.kind in DEFAULT_ON_KINDS
        if exclusive and not wanted:
            add(Reason("not_selected", f"an exclusive provider loads only when {slot_key} selects it",
                       f"hermes config set {slot_key} {quote(record.name)}"))
        elif not exclusive and not default_on and not wanted:
            add(Reason("not_enabled", "not listed in plugins.enabled",
                       f"hermes plugins enable {quote(record.name)}"))
    for req in record.manifest.requires_env if record.manifest else ():
        if not env.get(req.name):
            hint = f" ({req.description})" if req.description else ""
            where = f"; get it at {req.url}" if req.url else ""
            add(Reason("missing_env", f"required env var {req.name} is not set{hint}",
                       f"add {req.name}=... to {kernel.home / '.env'} or export it{where}"))
    missing_libraries = missing_python_dependencies(record.manifest)
    if missing_libraries:
        add(Reason("missing_dependency", f"python_dependencies not installed: "
                   f"{', '.join(missing_libraries)}", pip_command(missing_libraries), "warning"))
    if status.code and status.state != "failed" and all(r.code != status.code
                                                       for r in report.reasons):
        add(Reason(status.code, first_line(status.reason)))  # the kernel's own verdict, always
    if last_fault and status.state == "loaded":
        add(Reason("halt_attempt", f"in an earlier session: {last_fault.get('reason', '')}",
                   FAILURE_FIXES["halt_attempt"].format(name=quote(record.name)), "warning"))
    if status.state == "loaded":
        report.reasons.extend(_kept_names(kernel, status))
        report.reasons.extend(_mismatch(status))
        if record.source not in ("builtin", "bundled"):
            report.reasons.extend(_selection(kernel, status))
    for shadow in record.shadows:
        add(Reason("shadows", f"hides the {shadow.source} plugin of the same name at "
                   f"{shadow.location}", "rename one of them if both are wanted", "note"))
    return report


def _kept_names(kernel: Kernel, status: PluginStatus) -> list[Reason]:
    """Names this plugin kept although a later-installed plugin registers them too."""
    out = []
    for other in kernel.plugins.values():
        clash = other.clash
        if other.state == "failed" and clash.get("kept_by") == status.name:
            out.append(Reason("kept_name", f"keeps {clash.get('kind')} '{clash.get('name')}': "
                              f"plugin '{other.name}' registers it too; this plugin keeps it "
                              f"by install order, so '{other.name}' was not loaded",
                              f"disable one of them, or rename the {clash.get('kind')} in one",
                              "note"))
    return out


def _mismatch(status: PluginStatus) -> list[Reason]:
    manifest = status.record.manifest
    if manifest is None or manifest.synthesized:
        return []
    out = []
    for label, declared, actual in (("tool", set(manifest.provides_tools), set(status.tools)),
                                    ("hook", set(manifest.provides_hooks), set(status.hooks))):
        for name in sorted(actual - declared):
            out.append(Reason(f"undeclared_{label}", f"registers {label} {name!r}, which plugin.yaml "
                              "does not declare", f"add it to provides_{label}s", "warning"))
        for name in sorted(declared - actual):
            out.append(Reason(f"unregistered_{label}", f"declares {label} {name!r} but did not "
                              "register it", f"remove it from provides_{label}s or register it",
                              "warning"))
    return out


def _selection(kernel: Kernel, status: PluginStatus) -> list[Reason]:
    out = []
    for provider in status.providers:
        slot, _, name = provider.partition(":")
        info = kernel.config.slots.get(slot)
        if info is None or not info.config_key or slot == "memory":
            continue
        chosen = kernel.config.get(info.config_key) or info.default
        if chosen != name:
            out.append(Reason("slot_not_selected", f"provides {info.label} {name!r}, but "
                              f"{info.config_key} selects {chosen or 'nothing'}",
                              f"hermes config set {info.config_key} {quote(name)}", "note"))
    return out


def diagnose(kernel: Kernel, name: str | None = None, include_builtin: bool = False,
             load: bool = False) -> tuple[list[Report], list[Reason]]:
    """Reports for every plugin (or ``name``), plus problems not tied to one plugin. With
    ``load`` the kernel boots (plugin code runs); otherwise the ledger and plugin.yaml say."""
    if load:
        statuses = list(kernel.boot().plugins.values())
        ledger = read_ledger(kernel.home)
        faults = {s.name: (last_outcome(ledger, s.record) or {}).get("last_fault")
                  for s in statuses}
    else:
        items = recorded_statuses(kernel)
        statuses = [item.status for item in items]
        faults = {item.status.name: (item.outcome or {}).get("last_fault") for item in items}
    reports = [check(kernel, s, faults.get(s.name)) for s in statuses
               if (name is None and (include_builtin or s.record.source != "builtin"))
               or s.record.name == name or (name and name in s.record.aliases)]
    general = []
    found = kernel.discover()
    config = kernel.config
    for wanted in config.plugins_enabled or []:
        if found.get(wanted) is None and not any(r.name == wanted for r in found.problems):
            if name is None or name == wanted:
                general.append(Reason("not_installed", f"plugins.enabled names {wanted!r}, which is "
                                      "not installed", f"hermes plugins install SOURCE, or remove "
                                      f"it: hermes plugins remove {quote(wanted)}"))
    try:
        lock = read_lock(kernel.home)
    except LockUnreadable as exc:
        lock = {}
        general.append(Reason("lock_unreadable", f"{exc.path} is unreadable ({exc.detail})",
                              UNREADABLE_FIX, "warning"))
    for locked, entry in lock.items():
        if name in (None, locked):
            general.extend(_lock_reasons(entry, found.get(locked)))
    return reports, general


def _lock_reasons(entry: LockEntry, record: PluginRecord | None) -> list[Reason]:
    if entry.problem:
        return [Reason("lock_entry", entry.note, entry.fix, "warning")]
    locked, source = entry.name, entry.peek("source")
    if record is None:
        return [Reason("lock_orphan", f"plugins.lock records {locked!r} ({source}), but it is "
                       "not installed any more",
                       f"reinstall it or run `hermes plugins remove {quote(locked)}`", "warning")]
    if source in ("path", "git") and record.source != "user":
        return [Reason("shadowed", f"the {locked!r} installed at {entry.peek('path')} is hidden "
                       f"by the {record.source} plugin at {record.location}",
                       "remove or rename one of them")]
    return []


def exit_code(reports: list[Report], general: list[Reason]) -> int:
    broken = any(r.wanted and not r.active and r.state != "enabled" for r in reports)
    return 1 if broken or any(g.level == "error" for g in general) else 0


def format_reports(reports: list[Report], general: list[Reason]) -> str:
    lines = []
    for report in reports:
        version = f" {report.version}" if report.version else ""
        head = f"{report.name}{version} ({report.source})"
        if report.active:
            lines.append(f"✓ {head}: loaded, {plural(report.tools, 'tool')}, "
                         f"{plural(report.hooks, 'hook')}")
        else:
            mark = "✗" if report.wanted else "○"
            lines.append(f"{mark} {head}: {report.state}")
        for reason in report.reasons:
            fix = f"\n      fix: {reason.fix}" if reason.fix else ""
            lines.append(f"    - [{reason.code}] {_indented(reason.message)}{fix}")
    for reason in general:
        lines.append(f"! [{reason.code}] {_indented(reason.message)}\n      fix: {reason.fix}")
    return "\n".join(lines) if lines else "No plugins installed."


def _indented(message: str, indent: str = "        ") -> str:
    """A multi-line message (a manifest's problems, pluggy's errors) with its later lines
    indented under the reason, each on its own line."""
    first, *rest = message.splitlines() or [""]
    return "\n".join([first, *(indent + line.strip() for line in rest if line.strip())])

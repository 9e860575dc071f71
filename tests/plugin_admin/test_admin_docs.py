"""docs/writing-plugins.md stays in step with the code: every `hermes plugins` command, every
ctx method, every scaffold kind and every doctor reason code is documented."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

from hermes_agent import PluginContext
from hermes_agent.builtin_plugins.plugin_admin import doctor
from hermes_agent.builtin_plugins.plugin_admin.plugins_cmd import plugins
from hermes_agent.builtin_plugins.plugin_admin.scaffold_kinds import KINDS

DOCS = Path(__file__).parents[2] / "docs"
DOC = (DOCS / "writing-plugins.md").read_text(encoding="utf-8")
GUIDE = (DOCS / "plugins.md").read_text(encoding="utf-8")


def test_every_plugins_command_is_documented():
    for name in plugins.commands:
        assert f"hermes plugins {name}" in DOC + GUIDE or f"alias: {name}" in DOC, name


def test_every_ctx_method_is_documented():
    public = [n for n, _ in inspect.getmembers(PluginContext) if not n.startswith("_")]
    assert "register_tool" in public
    for name in public:
        assert f"`{name}(" in DOC or f"`{name}`" in DOC, name


def test_scaffold_kinds_and_doctor_codes_are_documented():
    assert f"{' | '.join(KINDS)}" in DOC
    source = inspect.getsource(doctor)
    codes = set(re.findall(r'Reason\((?:code, )?"([a-z_]+)"', source)) | set(doctor.FAILURE_FIXES)
    codes |= set(doctor.MANIFEST_PROBLEMS)
    codes |= {f"{kind}_{label}" for kind in re.findall(r'f"([a-z]+)_\{label\}"', source)
              for label in ("tool", "hook")}
    assert {"not_enabled", "missing_env", "import_error", "register_error", "entry_point_error",
            "undeclared_tool", "lock_orphan", "shadowed", "incompatible"} <= codes
    for code in codes:
        assert f"`{code}`" in DOC, code

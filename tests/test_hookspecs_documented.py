"""Every hookspec documents its whole contract, and the hook tables agree with the specs."""

from __future__ import annotations

import ast
import inspect
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from types import FunctionType

import pytest

import hermes_agent.hookspecs as hookspecs
from hermes_agent.hookspecs import (
    COMPAT_HOOKS,
    KERNEL_HOOKS,
    DISPATCH,
    EVENT_HOOKS,
    LIFECYCLE_HOOKS,
    MODULES,
    NOT_FIRED,
    PROJECT_NAME,
    REGISTRATION_HOOKS,
    hook_arguments,
)

SPEC_ATTR = PROJECT_NAME + "_spec"
HOOKSPECS_DIR = Path(hookspecs.__file__).resolve().parent

#: Wording of the ``Dispatch:`` line -> value in ``DISPATCH``. Longest phrases first.
DISPATCH_PHRASES = {
    "first non-empty string": "first_nonempty_str",
    "gateway directive": "gateway_directive",
    "verify directive": "verify_directive",
    "first string": "first_str",
    "first result": "first_result",
    "broadcast": "broadcast",
    "gather": "gather",
    "collector": "collector",
    "context": "context",
    "veto": "veto",
}

EXPECTED_LIFECYCLE = (
    "pre_tool_call",
    "post_tool_call",
    "pre_llm_call",
    "post_llm_call",
    "pre_api_request",
    "post_api_request",
    "transform_terminal_output",
    "transform_tool_result",
    "on_session_start",
    "on_session_end",
    "on_session_finalize",
    "on_session_reset",
    "subagent_stop",
    "on_memory_write",
)


def _collect_specs() -> dict[str, FunctionType]:
    specs: dict[str, FunctionType] = {}
    for module in MODULES:
        for name, obj in vars(module).items():
            if isinstance(obj, FunctionType) and hasattr(obj, SPEC_ATTR):
                assert name not in specs, f"hook {name} is specified twice"
                specs[name] = obj
    return specs


SPECS = _collect_specs()
ALL_HOOKS = EVENT_HOOKS + REGISTRATION_HOOKS


def _doc(fn: FunctionType) -> str:
    return inspect.cleandoc(fn.__doc__ or "")


def _line(doc: str, prefix: str) -> str | None:
    for line in doc.splitlines():
        if line.startswith(prefix):
            return line[len(prefix) :].strip()
    return None


def _flat(text: str) -> str:
    return " ".join(text.split())


spec_params = pytest.mark.parametrize("name", sorted(SPECS))


def test_specs_were_found():
    assert len(SPECS) == len(EVENT_HOOKS) + len(REGISTRATION_HOOKS) == 37


@spec_params
def test_summary_line(name):
    doc = _doc(SPECS[name])
    lines = doc.splitlines()
    assert lines and lines[0].strip(), f"{name}: docstring needs a one-line summary"
    assert len(lines) == 1 or not lines[1].strip(), f"{name}: summary must be one line"


@spec_params
def test_every_argument_has_a_param_line_in_order(name):
    fn = SPECS[name]
    doc = _doc(fn)
    documented = re.findall(r"^:param (\w+):", doc, flags=re.M)
    assert documented == list(hook_arguments(name)), name


@spec_params
def test_spec_body_is_only_the_docstring(name):
    tree = ast.parse(textwrap.dedent(inspect.getsource(SPECS[name])))
    (node,) = tree.body
    assert isinstance(node, ast.FunctionDef)
    assert len(node.body) == 1 and isinstance(node.body[0], ast.Expr), name
    assert isinstance(node.body[0].value, ast.Constant), name
    params = node.args
    assert not params.vararg and not params.kwarg, f"{name}: specs take no *args/**kwargs"
    assert not params.defaults and not params.kw_defaults, f"{name}: no defaults in specs"


@spec_params
def test_required_sections_present(name):
    doc = _doc(SPECS[name])
    for marker in (":returns:", "Dispatch:", "firstresult:", "historic:", "Implemented by:"):
        assert marker in doc, f"{name}: docstring lacks {marker!r}"
    fired = re.search(r"^Fired: \S", doc, flags=re.M)
    not_fired = "Not fired by this version" in doc
    assert bool(fired) != not_fired, f"{name}: needs exactly one of Fired:/Not fired"


@spec_params
def test_firstresult_and_historic_lines_agree_with_pluggy(name):
    fn = SPECS[name]
    opts = getattr(fn, SPEC_ATTR)
    line = _line(_doc(fn), "firstresult:")
    match = re.fullmatch(r"(yes|no)\. historic: (yes|no)\.", line or "")
    assert match, f"{name}: expected 'firstresult: yes|no. historic: yes|no.', got {line!r}"
    assert (match.group(1) == "yes") == bool(opts["firstresult"]), name
    assert (match.group(2) == "yes") == bool(opts["historic"]), name
    assert not opts["historic"], f"{name}: no hook is historic in this version"


@spec_params
def test_dispatch_line_matches_dispatch_table(name):
    line = _line(_doc(SPECS[name]), "Dispatch:")
    assert line, name
    for phrase, key in DISPATCH_PHRASES.items():
        if line.startswith(phrase + "."):
            assert DISPATCH[name] == key, f"{name}: docstring says {phrase!r}"
            break
    else:
        pytest.fail(f"{name}: unknown Dispatch wording {line!r}")


@spec_params
def test_not_fired_notice_matches_table(name):
    doc = _flat(_doc(SPECS[name]))
    if name in NOT_FIRED:
        assert NOT_FIRED[name] in doc, name
    else:
        assert "Not fired by this version" not in doc, name


def test_first_result_rules_are_firstresult():
    """A spec is ``firstresult`` exactly when its dispatch rule stops at the first accepted
    result, so a plain ``pm.hook.<name>(...)`` stops early too."""
    from hermes_agent.hookspecs.results import COMBINE

    for name, fn in SPECS.items():
        stops = COMBINE[DISPATCH[name]][0] == "first"
        assert bool(getattr(fn, SPEC_ATTR)["firstresult"]) == stops, name
    assert {n for n in SPECS if getattr(SPECS[n], SPEC_ATTR)["firstresult"]} == {
        "transform_tool_result", "transform_terminal_output", "transform_llm_output",
        "pre_gateway_dispatch", "plugin_install_times", "find_slot_provider", "inject_message",
        "platform_adapter"}


def test_table_keys_are_hook_names():
    assert set(DISPATCH) == set(SPECS)
    assert set(DISPATCH.values()) <= set(DISPATCH_PHRASES.values())
    assert set(NOT_FIRED) <= set(SPECS)
    assert set(NOT_FIRED) == {
        "kanban_task_claimed",
        "kanban_task_completed",
        "kanban_task_blocked",
        "pre_verify",
    }
    for notice in NOT_FIRED.values():
        assert notice.startswith("Not fired by this version: ") and notice.endswith(".")


def test_hook_lists():
    assert LIFECYCLE_HOOKS == EXPECTED_LIFECYCLE
    assert len(COMPAT_HOOKS) == 10
    assert EVENT_HOOKS == LIFECYCLE_HOOKS + COMPAT_HOOKS + KERNEL_HOOKS
    assert len(EVENT_HOOKS) == 31 == len(set(EVENT_HOOKS))
    assert len(set(ALL_HOOKS)) == len(ALL_HOOKS)
    assert set(ALL_HOOKS) == set(SPECS)


def test_registration_hooks_take_only_register():
    for name in REGISTRATION_HOOKS:
        assert hook_arguments(name) == ("register",), name
        assert DISPATCH[name] == "collector"


def test_event_payloads_never_mention_telemetry_version():
    for name in EVENT_HOOKS:
        assert "telemetry_schema_version" not in hook_arguments(name)


def test_hook_arguments_rejects_unknown_names():
    with pytest.raises(KeyError):
        hook_arguments("no_such_hook")


def test_specs_load_into_a_plugin_manager():
    import pluggy

    pm = pluggy.PluginManager(PROJECT_NAME)
    for module in MODULES:
        pm.add_hookspecs(module)
    for name in ALL_HOOKS:
        caller = getattr(pm.hook, name)
        assert caller.spec is not None
        assert tuple(caller.spec.argnames) == hook_arguments(name)


def test_import_is_light():
    env = dict(os.environ)
    import hermes_agent

    root = str(Path(hermes_agent.__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [root, env.get("PYTHONPATH")]))
    code = (
        "import hermes_agent.hookspecs, sys; "
        "assert 'hermes_agent.cli.root' not in sys.modules and 'pydantic' not in sys.modules"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr


def _is_type_checking_block(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and (
        (isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING")
        or (isinstance(node.test, ast.Attribute) and node.test.attr == "TYPE_CHECKING")
    )


def _runtime_imports(tree: ast.AST):
    """Yield import nodes that execute at runtime (not under ``if TYPE_CHECKING:``)."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if _is_type_checking_block(node):
            stack.extend(node.orelse)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        stack.extend(ast.iter_child_nodes(node))


SOURCE_FILES = sorted(HOOKSPECS_DIR.glob("*.py"))


@pytest.mark.parametrize("path", SOURCE_FILES, ids=lambda p: p.name)
def test_hookspecs_import_only_pluggy_stdlib_and_itself(path):
    text = path.read_text(encoding="utf-8")
    assert not re.search(r"^\s*from \.\.", text, flags=re.M), f"{path.name}: leaves package"
    for match in re.finditer(r"^\s*(?:from|import) (hermes_agent\S*)", text, flags=re.M):
        assert match.group(1).startswith("hermes_agent.hookspecs"), path.name
    allowed = set(sys.stdlib_module_names) | {"pluggy", "__future__"}
    tree = ast.parse(text)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level:
            assert node.level == 1, f"{path.name}: relative import leaves the package"
    for node in _runtime_imports(tree):
        if isinstance(node, ast.ImportFrom) and node.level:
            continue
        modules = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module]
        for module in modules:
            top = module.split(".")[0]
            assert top in allowed, f"{path.name}: imports {module!r} at runtime"


def test_source_files_found():
    names = {p.name for p in SOURCE_FILES}
    assert {"__init__.py", "markers.py", "payloads.py"} <= names
    assert {m.__name__.rsplit(".", 1)[1] + ".py" for m in MODULES} <= names


def test_every_dispatch_rule_has_a_combiner():
    from hermes_agent.hookspecs.results import COMBINE

    assert set(DISPATCH.values()) <= set(COMBINE)
    assert all(how in ("first", "all") for how, _ in COMBINE.values())

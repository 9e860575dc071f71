"""docs/hooks.md documents exactly the hooks the specs define, with the same arguments."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hermes_agent.hookspecs import (
    DISPATCH,
    EVENT_HOOKS,
    NOT_FIRED,
    REGISTRATION_HOOKS,
    hook_arguments,
)

DOC = Path(__file__).resolve().parent.parent / "docs" / "hooks.md"
ALL_HOOKS = EVENT_HOOKS + REGISTRATION_HOOKS
HOOK_HEADING = re.compile(r"`?([a-z][a-z0-9_]*)`?")

#: Wording of a ``Dispatch:`` line -> value in ``DISPATCH``. Longest phrases first.
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


def _sections() -> tuple[str, list[tuple[str, str]]]:
    """Split the document into its intro and its ``## `` sections (heading, body)."""
    intro: list[str] = []
    sections: list[tuple[str, list[str]]] = []
    in_code = False
    for line in DOC.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            in_code = not in_code
        if not in_code and line.startswith("## "):
            sections.append((line[3:].strip(), []))
        elif sections:
            sections[-1][1].append(line)
        else:
            intro.append(line)
    return "\n".join(intro), [(h, "\n".join(body)) for h, body in sections]


INTRO, SECTIONS = _sections()


def _hook_sections() -> dict[str, str]:
    found: dict[str, str] = {}
    for heading, body in SECTIONS:
        match = HOOK_HEADING.fullmatch(heading)
        if match:
            name = match.group(1)
            assert name not in found, f"hook {name} has two sections"
            found[name] = body
    return found


HOOK_SECTIONS = _hook_sections()


def _lines_starting(body: str, prefix: str) -> list[str]:
    return [line for line in body.splitlines() if line.startswith(prefix)]


def test_no_section_names_an_unknown_hook():
    unknown = set(HOOK_SECTIONS) - set(ALL_HOOKS)
    assert not unknown, f"docs/hooks.md has sections for unknown hooks: {sorted(unknown)}"


def test_every_hook_has_a_section():
    missing = [name for name in ALL_HOOKS if name not in HOOK_SECTIONS]
    assert not missing, f"docs/hooks.md lacks sections for: {missing}"


@pytest.mark.parametrize("name", ALL_HOOKS)
def test_arguments_line_matches_spec(name):
    lines = _lines_starting(HOOK_SECTIONS[name], "Arguments:")
    assert len(lines) == 1, f"{name}: expected exactly one 'Arguments:' line"
    expected = "Arguments: " + ", ".join(f"`{arg}`" for arg in hook_arguments(name))
    assert lines[0].rstrip() == expected


@pytest.mark.parametrize("name", ALL_HOOKS)
def test_return_and_dispatch_documented(name):
    body = HOOK_SECTIONS[name]
    assert _lines_starting(body, "Returns:"), f"{name}: no 'Returns:' line"
    lines = _lines_starting(body, "Dispatch: ")
    assert len(lines) == 1, f"{name}: expected exactly one 'Dispatch:' line"
    text = lines[0][len("Dispatch: ") :]
    for phrase, key in DISPATCH_PHRASES.items():
        if text.startswith(phrase + "."):
            assert DISPATCH[name] == key, f"{name}: docs say {phrase!r}"
            break
    else:
        pytest.fail(f"{name}: unknown dispatch wording {text!r}")


@pytest.mark.parametrize("name", ALL_HOOKS)
def test_fired_status_matches_spec(name):
    body = HOOK_SECTIONS[name]
    flat = " ".join(body.split())
    if name in NOT_FIRED:
        assert NOT_FIRED[name] in flat, f"{name}: docs must say {NOT_FIRED[name]!r}"
        assert not _lines_starting(body, "Fired:"), name
    else:
        assert "Not fired by this version" not in flat, name
        assert _lines_starting(body, "Fired: "), f"{name}: no 'Fired:' line"


def test_intro_explains_both_plugin_styles():
    intro = [INTRO]
    for heading, body in SECTIONS:
        if HOOK_HEADING.fullmatch(heading):
            break
        intro += [heading, body]
    text = "\n".join(intro)
    assert "@hookimpl" in text
    assert "ctx.register_hook(name, callback)" in text
    assert "**kwargs" in text
    assert "subset" in text

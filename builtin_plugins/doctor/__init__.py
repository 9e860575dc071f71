"""Builtin plugin: ``hermes doctor`` (:mod:`.cli`). It asks every loaded plugin's
``doctor_checks`` hook what is wrong in its part (:mod:`.gather`) and checks what belongs to
no plugin itself (:mod:`.config_checks`, :mod:`.home_checks`): config.yaml and its slot
selections, the home's file modes and secret files, the disk, the cache key. docs/doctor.md."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hermes_agent import hookimpl

if TYPE_CHECKING:
    from hermes_agent import Kernel


@hookimpl
def doctor_checks(kernel: "Kernel", config: Any, offline: bool) -> list[Any]:
    from hermes_agent.kits.cli import secret_file_notes

    from .config_checks import config_findings, slot_findings
    from .home_checks import home_findings

    return [*config_findings(config), *slot_findings(kernel),
            *home_findings(kernel.home, kernel.env, secret_file_notes())]

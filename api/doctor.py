"""What ``hermes doctor`` reports: one :class:`Finding` per thing checked.

Each plugin checks its own part of the setup in a ``doctor_checks`` hook (docs/hooks.md)
and returns findings; the builtin doctor plugin gathers and prints them (docs/doctor.md).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, ClassVar, Literal

__all__ = ["Finding"]

Status = Literal["ok", "warn", "problem"]


@dataclass(frozen=True)
class Finding:
    """One result of a check: ``ok``, a ``warn`` (works, but suspect) or a ``problem``
    (something does not work, or is unsafe). A warning or problem says how to fix it."""

    check: str  # what was checked, short: "sandbox", "provider openrouter", "state.db"
    status: Status
    detail: str  # what was found, in a sentence
    fix: str = ""  # the command or edit that fixes it

    STATUSES: ClassVar[tuple[str, ...]] = ("ok", "warn", "problem")

    def __post_init__(self) -> None:
        if self.status not in self.STATUSES:
            raise ValueError(f"Finding.status must be one of {', '.join(self.STATUSES)}, "
                             f"not {self.status!r}")
        if self.status == "problem" and not self.fix:
            raise ValueError(f"the problem {self.check!r} needs a fix: say how to fix it")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

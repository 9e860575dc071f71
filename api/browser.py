"""The browser providers' contract (the ``browser`` slot, ``browser.cloud_provider``): per
agent session a provider opens a browser and says where it is, a Chromium to start here or a
DevTools endpoint (a cloud service's); the builtin plugin ``browser`` drives it and closes it
with the session. A Hermes Agent 0.19 provider's ``{"cdp_url", "bb_session_id"}`` answer is
read as a :class:`BrowserLaunch`. No I/O here. docs/browser.md."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["BrowserLaunch", "BrowserProvider"]


@dataclass(frozen=True)
class BrowserLaunch:
    """``cdp_url`` to connect to (with ``headers``), else ``executable`` to start headless
    with ``args`` and its profile in ``user_data_dir``; ``session_id`` goes to close_session."""

    cdp_url: str = ""
    headers: Mapping[str, str] = field(default_factory=dict)
    executable: str = ""
    args: tuple[str, ...] = ()
    user_data_dir: str = ""
    session_id: str = ""


class BrowserProvider(ABC):
    @property
    @abstractmethod
    def name(self) -> str:
        """The name ``browser.cloud_provider`` selects."""

    @abstractmethod
    def is_available(self) -> bool:
        """Whether it can open a browser (key set, binary found). No network."""

    def unavailable_reason(self) -> str:
        """Why not, stating the fix ("" when unknown)."""
        return ""

    @abstractmethod
    def create_session(self, task_id: str) -> BrowserLaunch | dict[str, Any]:
        """Open a browser for agent session ``task_id``; raise with the fix on failure."""

    def close_session(self, session_id: str) -> bool:
        """Release what :meth:`create_session` opened."""
        return True

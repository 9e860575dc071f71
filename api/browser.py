"""The browser providers' contract: what the ``browser_*`` tools get from a provider.

A provider is a plugin in the ``browser`` slot (``ctx.register_browser_provider``;
``browser.cloud_provider`` selects it). For each agent session it opens a browser and says
where it is: a Chromium to start on this machine (:attr:`BrowserLaunch.executable`) or a
Chrome DevTools Protocol endpoint to connect to (:attr:`BrowserLaunch.cdp_url`, what a cloud
browser service hands out). The builtin plugin ``browser`` drives it with Playwright and calls
:meth:`BrowserProvider.close_session` when the agent session ends. Providers written for
Hermes Agent 0.19 (``create_session(task_id) -> {"cdp_url", "bb_session_id", ...}``) fit
as they are: a dict answer is read as a :class:`BrowserLaunch`. Nothing here does I/O.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["BrowserLaunch", "BrowserProvider", "as_launch"]


@dataclass(frozen=True)
class BrowserLaunch:
    """Where one session's browser is: ``cdp_url`` to connect to, else ``executable`` to
    start (with ``args``, headless, its profile in ``user_data_dir``)."""

    cdp_url: str = ""
    headers: Mapping[str, str] = field(default_factory=dict)  # sent when connecting (a key)
    executable: str = ""
    args: tuple[str, ...] = ()
    user_data_dir: str = ""
    session_id: str = ""  # the provider's own id, handed back to close_session
    features: Mapping[str, Any] = field(default_factory=dict)


def as_launch(answer: Any) -> BrowserLaunch:
    """A provider's ``create_session`` answer as a :class:`BrowserLaunch` (an original
    provider's dict is read by its keys); ``TypeError`` for anything else."""
    if isinstance(answer, BrowserLaunch):
        return answer
    if isinstance(answer, Mapping) and (answer.get("cdp_url") or answer.get("executable")):
        session = (answer.get("session_id") or answer.get("bb_session_id")
                   or answer.get("session_name") or "")
        return BrowserLaunch(cdp_url=str(answer.get("cdp_url") or ""),
                             headers=dict(answer.get("headers") or {}),
                             executable=str(answer.get("executable") or ""),
                             args=tuple(answer.get("args") or ()),
                             session_id=str(session),
                             features=dict(answer.get("features") or {}))
    raise TypeError("a browser provider's create_session() must return a BrowserLaunch or a "
                    f"dict with 'cdp_url', not {type(answer).__name__}")


class BrowserProvider(ABC):
    """Opens one browser per agent session and closes it again."""

    @property
    @abstractmethod
    def name(self) -> str:
        """The name ``browser.cloud_provider`` selects."""

    @abstractmethod
    def is_available(self) -> bool:
        """Whether it can open a browser (its key is set, its binary exists). No network."""

    def unavailable_reason(self) -> str:
        """Why :meth:`is_available` is false, stating the fix; ``""`` when unknown."""
        return ""

    @abstractmethod
    def create_session(self, task_id: str) -> BrowserLaunch | dict[str, Any]:
        """Open a browser for the agent session ``task_id``; raise with the fix on failure."""

    def close_session(self, session_id: str) -> bool:
        """Release what :meth:`create_session` opened (its ``session_id``)."""
        return True

    def emergency_cleanup(self, session_id: str) -> None:
        """Release it at shutdown, quickly and without raising."""
        try:
            self.close_session(session_id)
        except Exception:
            pass

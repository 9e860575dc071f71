"""The ``browser`` section of config.yaml read once per call, defaults filled in."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from .config_schema import BrowserSection

if TYPE_CHECKING:
    from hermes_agent import Kernel

log = logging.getLogger("hermes_agent.browser")


class BrowserSettings(BrowserSection):
    cloud_provider: str = ""  # the kernel's key: the browser slot's selection

    def private_allowed(self, config: Any) -> bool:
        """``browser.allow_private_networks``, or the web tools' ``web.allow_private_networks``."""
        return bool(self.allow_private_networks or config.get("web.allow_private_networks"))


def load_settings(kernel: "Kernel") -> BrowserSettings:
    data = kernel.config.get("browser") or {}
    if not isinstance(data, dict):
        data = {}
    try:
        return BrowserSettings.model_validate(data)
    except ValidationError as exc:
        bad = {str(err["loc"][0]) for err in exc.errors() if err["loc"]}
        log.warning("browser: invalid keys in config.yaml (%s); using their defaults",
                    ", ".join(sorted(bad)))
        return BrowserSettings.model_validate({k: v for k, v in data.items() if k not in bad})

"""The browser tools' keys in the ``browser`` section of config.yaml. The kernel owns
``browser.cloud_provider`` (the ``browser`` slot's selection). Imports nothing but pydantic."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class BrowserSection(BaseModel):
    model_config = ConfigDict(extra="allow")

    # a Chrome DevTools endpoint (ws:// or http://) to drive instead of a local Chromium;
    # BROWSER_CDP_URL in the environment does the same
    cdp_url: str = ""
    executable: str = ""  # the local Chromium ("": /usr/bin/chromium, else chromium on PATH)
    extra_args: list[str] = Field(default_factory=list)  # more Chromium flags for the local one
    # let the browser open private/loopback addresses (web.allow_private_networks does too)
    allow_private_networks: bool = False
    allowed_hosts: list[str] = Field(default_factory=list)  # host names allowed though private
    command_timeout: float = Field(30.0, gt=0)  # seconds one browser action may take
    snapshot_char_limit: int = Field(20000, gt=0)  # longer snapshots are cut, with a note
    console_entries: int = Field(200, gt=0)  # console messages kept per page
    # a session's browser unused this long (seconds) is closed; its next call opens a new one
    # (logins and cookies are lost then). 0: kept until the agent session ends
    idle_timeout: float = Field(1800.0, ge=0)

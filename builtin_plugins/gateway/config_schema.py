"""The ``gateway`` and ``platforms`` sections of config.yaml. ``platforms.<name>`` is each
platform plugin's own section (handed to its adapter as is), so only its common keys are
typed here. Imports nothing but pydantic."""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field


class GatewaySection(BaseModel):
    model_config = ConfigDict(extra="allow")

    max_concurrent_turns: int = Field(256, ge=1)  # worker threads running turns
    max_queue_per_chat: int = Field(20, ge=1)  # messages waiting per chat
    session_hygiene: float = Field(0.85, ge=0, le=1)  # compress first at this share; 0: off
    stream_replies: bool = True  # show replies while the model writes them
    run_cron: bool = True  # run the scheduled jobs' loop (the cron plugin) in the gateway
    shared_queue: bool = True  # be one replica of several when the session store shares a queue
    lease_seconds: float = Field(15.0, gt=0)  # a replica's hold on a chat, renewed while busy
    chat_always_approvals: bool = False  # a chat's "always" may write command_allowlist
    workers: int = Field(0, ge=0, le=64)  # turns in this many worker processes; 0: threads


class PlatformSection(BaseModel):
    """Keys every platform understands (``enabled``, ``allowed_users``, ...) and the
    plugin's own; each platform plugin checks its settings when its adapter is built."""

    model_config = ConfigDict(extra="allow")
    report_unknown_keys: ClassVar[bool] = False


#: ``platforms:``: one section per platform name.
PLATFORMS = (dict[str, PlatformSection], {})

"""The ``cron`` section of config.yaml (the scheduler's defaults). ``approvals.cron_mode``
belongs to the core tools' ``approvals`` section. Imports nothing but pydantic."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class CronSection(BaseModel):
    model_config = ConfigDict(extra="allow")

    # zone of cron expressions written without CRON_TZ= (empty: `timezone`, else the machine's)
    timezone: str = ""
    retries: int = Field(1, ge=0, le=20)  # retries of a failed run, unless the job sets its own
    retry_delay: float = Field(60.0, ge=0)  # seconds before a retry, unless the job sets its own
    tick_interval: float = Field(60.0, gt=0)  # seconds between looks at jobs.json at most
    output_keep: int = Field(50, ge=1)  # output files kept per job

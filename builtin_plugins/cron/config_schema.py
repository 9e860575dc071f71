"""The ``cron`` section of config.yaml (the scheduler's defaults). ``approvals.cron_mode``
belongs to the core tools' ``approvals`` section. Imports nothing but pydantic (and zoneinfo
to check a zone name)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator


class CronSection(BaseModel):
    model_config = ConfigDict(extra="allow")

    # zone of cron expressions written without CRON_TZ= (empty: `timezone`, else the machine's)
    timezone: str = ""
    retries: int = Field(1, ge=0, le=20)  # retries of a failed run, unless the job sets its own
    retry_delay: float = Field(60.0, ge=0)  # seconds before a retry, unless the job sets its own
    tick_interval: float = Field(60.0, gt=0)  # seconds between looks at jobs.json at most
    output_keep: int = Field(50, ge=1)  # output files kept per job

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        value = value.strip()
        if value:
            from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

            try:
                ZoneInfo(value)
            except (ZoneInfoNotFoundError, ValueError) as exc:
                raise ValueError(f"unknown time zone {value!r}: use an IANA name such as "
                                 "Europe/Paris, America/New_York or UTC") from exc
        return value

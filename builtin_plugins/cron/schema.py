"""The ``cronjob`` tool's function schema (imports nothing: loaded at every boot)."""

from __future__ import annotations

from typing import Any

EXAMPLES = ("'every 30m' or 'every 2h' (recurring), 'in 30m' or '30m' (once, from now), "
            "'2026-06-01T09:00' (once, at an ISO 8601 time), '0 9 * * 1-5' (cron: 09:00 on "
            "weekdays), 'CRON_TZ=Europe/Paris 0 9 * * *' (cron in a time zone)")
ACTIONS = ("create", "list", "update", "pause", "resume", "remove", "run")
CRONJOB: dict[str, Any] = {
    "name": "cronjob",
    "description": (
        "Schedule tasks that the agent runs later, by itself, with nobody watching: each run "
        "is a new session given `prompt`, so write the prompt self-contained. Actions: create "
        "(schedule and prompt required), list, update, pause, resume, remove, run (now). The "
        "final answer of each run is saved and delivered to `deliver`."),
    "parameters": {
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": list(ACTIONS)},
            "job_id": {"type": "string",
                       "description": "The job's id (update, pause, resume, remove, run)"},
            "prompt": {"type": "string",
                       "description": "What to do at each run, self-contained (create)"},
            "schedule": {"type": "string", "description": f"When to run: {EXAMPLES}"},
            "name": {"type": "string", "description": "A short name for the job"},
            "repeat": {"type": "integer",
                       "description": "How many runs in all (default: once for a one-shot "
                                      "time, forever otherwise)"},
            "deliver": {"type": "string",
                        "description": "Where each result goes: 'local' (saved only, the "
                                       "default), 'origin' (this chat), or a report file "
                                       "'file:/path/to/report.md' (.md, .txt or .log, not "
                                       "hidden). Other chats are set by the user"},
            "retries": {"type": "integer",
                        "description": "Retries of a failed run (default: cron.retries)"},
            "retry_delay": {"type": "number",
                            "description": "Seconds before a retry (default: cron.retry_delay)"},
        },
        "required": ["action"],
    },
}



"""The ``cronjob`` tool, called by the scripted model through the agent loop: create, list,
update, pause, resume, run and remove, and errors the model can act on."""

from __future__ import annotations

import json
from typing import Any

from hermes_agent.testing.fake_llm import reply_text, reply_tool_call

from .conftest import load_job


def call(kernel: Any, server: Any, **args: Any) -> dict[str, Any]:
    """One agent turn in which the model calls ``cronjob`` with ``args``; the tool's result."""
    server.script(reply_tool_call("cronjob", args), reply_text("ok"))
    agent = kernel.service("agent").create(platform="cli")
    assert "cronjob" in agent.tool_names  # hermes-cli offers it
    agent.run_conversation("manage my jobs")
    agent.finalize("shutdown")
    body = server.posts()[-1].body
    return json.loads([m["content"] for m in body["messages"] if m["role"] == "tool"][-1])


def test_the_model_manages_jobs_with_the_cronjob_tool(kernel_for, server):
    kernel = kernel_for()
    created = call(kernel, server, action="create", schedule="every 2h", name="digest",
                   prompt="Summarise the repository's open issues.", deliver="local")
    assert created["success"] and created["job"]["schedule"] == "every 120m"
    assert "No scheduler is running now" in created["message"]
    job_id = created["job"]["job_id"]
    stored = load_job(kernel, job_id)
    assert stored["origin"]["platform"] == "cli" and stored["origin"]["session_id"]

    listed = call(kernel, server, action="list")
    assert listed["count"] == 1 and listed["jobs"][0]["name"] == "digest"

    updated = call(kernel, server, action="update", job_id=job_id, schedule="0 8 * * *",
                   retries=2)
    assert updated["job"]["schedule"] == "0 8 * * *"
    assert load_job(kernel, job_id)["retries"] == 2

    assert call(kernel, server, action="pause", job_id=job_id)["job"]["state"] == "paused"
    assert call(kernel, server, action="resume", job_id=job_id)["job"]["state"] == "scheduled"
    ran = call(kernel, server, action="run", job_id=job_id)
    assert "is due now" in ran["message"]
    assert load_job(kernel, job_id)["next_run_at"] <= ran["job"]["next_run_at"]
    assert call(kernel, server, action="remove", job_id=job_id)["removed"] == job_id
    assert load_job(kernel, job_id) is None


def test_the_tool_answers_mistakes_with_the_fix(kernel_for, server):
    kernel = kernel_for()
    bad = call(kernel, server, action="create", schedule="whenever", prompt="x")
    assert "invalid schedule 'whenever'" in bad["error"] and "'every 30m'" in bad["error"]
    missing = call(kernel, server, action="create", prompt="no schedule")
    assert "create needs `schedule` and `prompt`" in missing["error"]
    unknown = call(kernel, server, action="pause", job_id="nope")
    assert "no cron job 'nope'" in unknown["error"]
    no_id = call(kernel, server, action="remove")
    assert "needs `job_id`" in no_id["error"]
    target = call(kernel, server, action="create", schedule="every 1h", prompt="x",
                  deliver="carrier-pigeon")
    # a bare name is a platform's home channel or a configured channel: a chat, the user's
    assert "cannot deliver to 'carrier-pigeon'" in target["error"]
    assert "Use 'local' or 'origin'" in target["error"]
    garbage = call(kernel, server, action="create", schedule="every 1h", prompt="x",
                   deliver="a b")
    assert "unknown delivery target 'a b'" in garbage["error"]
